-- Vectors per model, kept by triggers: `vector_models()` runs before every hybrid query,
-- and counting a million rows each time would cost more than the search itself.
CREATE TABLE vector_counts (
    model text PRIMARY KEY,
    dim integer NOT NULL,
    count bigint NOT NULL
);

CREATE FUNCTION palimpsest_vectors_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO vector_counts AS c (model, dim, count)
        SELECT model, max(dim), count(*) FROM added GROUP BY model
        ON CONFLICT (model) DO UPDATE SET count = c.count + excluded.count, dim = excluded.dim;
    RETURN NULL;
END;
$$;

CREATE FUNCTION palimpsest_vectors_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE vector_counts c SET count = c.count - r.n
        FROM (SELECT model, count(*) AS n FROM removed GROUP BY model) r WHERE c.model = r.model;
    DELETE FROM vector_counts WHERE count <= 0;
    RETURN NULL;
END;
$$;

CREATE TRIGGER vectors_added AFTER INSERT ON vectors
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION palimpsest_vectors_added();
CREATE TRIGGER vectors_removed AFTER DELETE ON vectors
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION palimpsest_vectors_removed();

INSERT INTO vector_counts SELECT model, max(dim), count(*) FROM vectors GROUP BY model;
