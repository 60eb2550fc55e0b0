app_name = "alerts"

urlpatterns: list = []
