from django.urls import path, re_path

from .views.alerts.actions import alert_action
from .views.alerts.channels import channel_delete, channel_edit, channel_list, channel_test
from .views.alerts.pages import alert_detail, alert_list
from .views.alerts.subscriptions import (
    subscription_confirm,
    subscription_delete,
    subscription_edit,
    subscription_list,
    subscription_resend,
)
from .views.alerts.unsubscribe import unsubscribe

app_name = "alerts"

urlpatterns = [
    path("", alert_list, name="list"),
    path("<int:pk>/", alert_detail, name="detail"),
    re_path(
        r"^(?P<pk>[0-9]{1,18})/(?P<action>acknowledge|accept|invalid)/$",
        alert_action,
        name="action",
    ),
    path("subscriptions/", subscription_list, name="subscriptions"),
    path("subscriptions/new/", subscription_edit, name="subscription_new"),
    path("subscriptions/<int:pk>/", subscription_edit, name="subscription_edit"),
    path("subscriptions/<int:pk>/delete/", subscription_delete, name="subscription_delete"),
    path("subscriptions/<int:pk>/resend/", subscription_resend, name="subscription_resend"),
    path("subscriptions/confirm/<str:token>/", subscription_confirm, name="subscription_confirm"),
    path("unsubscribe/<str:token>/", unsubscribe, name="unsubscribe"),
    path("channels/", channel_list, name="channels"),
    path("channels/new/", channel_edit, name="channel_new"),
    path("channels/<int:pk>/", channel_edit, name="channel_edit"),
    path("channels/<int:pk>/test/", channel_test, name="channel_test"),
    path("channels/<int:pk>/delete/", channel_delete, name="channel_delete"),
]
