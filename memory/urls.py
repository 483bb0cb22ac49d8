from django.conf.urls.i18n import i18n_patterns
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularSwaggerView

from memory.api import mcp, schema

urlpatterns = [
    path("api/v1/", include("memory.api.urls")),
    path("mcp", mcp.door, name="mcp"),  # the two verbs over MCP (streamable HTTP)
    path("internal/v1/", include("memory.internal.urls")),
    path("api/schema/", schema.SchemaView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger"),
    path("admin/", admin.site.urls),
]

urlpatterns += i18n_patterns(
    path("", include("playground.urls")),
    prefix_default_language=True,
)

# Under /api/ every error answers in the contract's one JSON shape; elsewhere Django's pages.
handler400 = "memory.contract.errors.handler400"
handler403 = "memory.contract.errors.handler403"
handler404 = "memory.contract.errors.handler404"
handler500 = "memory.contract.errors.handler500"
