"""One module a stage of recall (pipeline.py orders them): each reads through the store and
adjusts the candidates by the pure functions of recall/ and scoring/."""
