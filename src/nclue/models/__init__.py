"""Neural models: encoder loading (sentence-transformers, ONNX Runtime, model2vec static),
model identity (name + SHA-256 of the files), local ONNX export and cross-encoders.

Every function takes a *local* model directory; nothing here downloads from a hub.
"""
