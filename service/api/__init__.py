"""The HTTP service: Sanic routes, auth, schemas, OpenAPI, and the runners of deadlines and bots."""
