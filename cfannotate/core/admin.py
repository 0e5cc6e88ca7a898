"""Researchers' API tokens in the admin: seen by their ending, revoked by deleting them.

DRF's own token admin goes: it would make plain keys, which no request can use any more.
"""

from django.contrib import admin
from rest_framework.authtoken.models import TokenProxy

from cfannotate.core.models import ApiToken

admin.site.unregister(TokenProxy)


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["user", "key_ending", "created_at"]
    search_fields = ["user__username"]
    fields = ["user", "key_ending", "created_at"]
    readonly_fields = fields

    def has_add_permission(self, request) -> bool:
        return False  # a key is made on the researcher's token page, and shown only there

    def has_change_permission(self, request, obj=None) -> bool:
        return False
