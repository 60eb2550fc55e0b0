from django.templatetags.static import static
from django.urls import path
from django.views.generic import RedirectView

from .views.advisor import advisor_index, advisor_measure, advisor_profile
from .views.agent_loop import agent_loop_page
from .views.compare import compare_page
from .views.debug_mail import debug_mail_page
from .views.endpoint import endpoint_page
from .views.exports import exports_page
from .views.leaderboard import leaderboard_page
from .views.monthly import monthly_latest, monthly_report_csv, monthly_report_page
from .views.price import price_page
from .views.run import run_page
from .views.runs import runs_page
from .views.workloads import workloads_page

app_name = "dashboard"

urlpatterns = [
    path("", leaderboard_page, name="leaderboard"),
    path("endpoints/<slug:slug>/", endpoint_page, name="endpoint"),
    path("runs/", runs_page, name="runs"),
    path("runs/<int:run_id>/", run_page, name="run"),
    path("exports/", exports_page, name="exports"),
    path("workloads/", workloads_page, name="workloads"),
    path("price/", price_page, name="price"),
    path("agent-loop/", agent_loop_page, name="agent_loop"),
    path("compare/", compare_page, name="compare"),
    path("advisor/", advisor_index, name="advisor"),
    path("advisor/<slug:slug>/", advisor_profile, name="advisor_profile"),
    path("advisor/<slug:slug>/measure/", advisor_measure, name="advisor_measure"),
    path("reports/monthly/", monthly_latest, name="monthly_latest"),
    path("reports/monthly/<str:month>/", monthly_report_page, name="monthly_report"),
    path("reports/monthly/<str:month>/csv/", monthly_report_csv, name="monthly_report_csv"),
    path("debug/mail/", debug_mail_page, name="debug_mail"),
    # Browsers and feed readers ask for /favicon.ico whatever the page's <link rel="icon"> says.
    path("favicon.ico", RedirectView.as_view(url=static("dashboard/favicon.svg"), permanent=True)),
]
