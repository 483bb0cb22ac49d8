"""The contract's HTTP door (``/api/v1/``): thin DRF views that hand each request to its verb,
the serializers the registry generates, and the OpenAPI schema's hooks. The contract's
definition (registry, shapes, params, errors) is ``memory.contract``, below the verbs."""
