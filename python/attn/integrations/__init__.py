"""attn as a backend of other libraries: ``attn.integrations.transformers``
(Hugging Face transformers' attention interface)."""
