"""Index stores: one interface (base.IndexStore), an embedded default and Weaviate."""
