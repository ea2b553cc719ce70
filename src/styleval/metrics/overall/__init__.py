"""Overall metrics; importing this package registers them."""
