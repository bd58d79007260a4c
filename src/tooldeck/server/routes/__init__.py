"""REST routes, one module per group."""
