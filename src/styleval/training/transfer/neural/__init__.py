"""Neural transfer baselines trained on parallel style data (see docs/transfer.md)."""
