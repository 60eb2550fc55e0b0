from django.contrib import admin

from .models import WorkloadProfile


@admin.register(WorkloadProfile)
class WorkloadProfileAdmin(admin.ModelAdmin):
    list_display = (
        "name",
        "workload",
        "input_tokens",
        "output_tokens",
        "calls",
        "budget_s",
        "preset",
    )
    prepopulated_fields = {"slug": ("name",)}
    filter_horizontal = ("endpoints",)
