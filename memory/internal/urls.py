from django.urls import path

from memory.internal import views

urlpatterns = [
    path("graph/query", views.GraphQueryView.as_view(), name="internal-graph-query"),
    path("vectors/search", views.VectorSearchView.as_view(), name="internal-vectors-search"),
    path("objects/<uuid:object_id>", views.ObjectReadView.as_view(), name="internal-object"),
    path("outbox/drain", views.DrainView.as_view(), name="internal-outbox-drain"),
]
