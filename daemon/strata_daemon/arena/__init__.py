"""The retrieval arena: recall strategies scored on what agents actually used, and a
UCB1 bandit that picks each namespace's default strategy."""
