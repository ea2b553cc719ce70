"""Style metrics; importing this package registers them."""
