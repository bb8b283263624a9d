"""HTTP routes of the api service, one module per resource."""
