"""Page indexes stored inside a collection: lexical (bm25s, :mod:`nclue.index.lexical`) and
dense (:mod:`nclue.index.dense`), built by ``nclue index``."""
