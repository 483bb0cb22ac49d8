"""The stores behind the contract, each behind a narrow interface with an embedded default and a
production engine: embeddings, vectors (Qdrant), the knowledge graph (LightRAG), objects."""
