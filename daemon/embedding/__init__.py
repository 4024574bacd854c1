"""Text embeddings, offline: a GGUF model run by llama.cpp."""
