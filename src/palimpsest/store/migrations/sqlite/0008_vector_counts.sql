-- Vectors per model, kept by triggers: `vector_models()` runs before every hybrid query
-- and every vector write, and counting all vectors each time cost more than the search.
CREATE TABLE vector_counts (
    model TEXT PRIMARY KEY,
    dim INTEGER NOT NULL,
    count INTEGER NOT NULL
);
INSERT INTO vector_counts SELECT model, max(dim), count(*) FROM vectors GROUP BY model;
CREATE TRIGGER vectors_counted_ai AFTER INSERT ON vectors BEGIN
    INSERT INTO vector_counts VALUES (new.model, new.dim, 1)
    ON CONFLICT(model) DO UPDATE SET count = count + 1, dim = excluded.dim;
END;
CREATE TRIGGER vectors_counted_ad AFTER DELETE ON vectors BEGIN
    UPDATE vector_counts SET count = count - 1 WHERE model = old.model;
    DELETE FROM vector_counts WHERE model = old.model AND count <= 0;
END;
