app_name = "benchmarks"

urlpatterns: list = []
