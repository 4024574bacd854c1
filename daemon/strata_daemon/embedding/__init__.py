"""Text embeddings, offline: the packaged int8 MiniLM in onnxruntime by default, or any GGUF
embedding model run by llama.cpp (`embedding.model`)."""
