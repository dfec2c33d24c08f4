-- Vectors (one per message and model) and the durable job queue.
-- `embedding` has no fixed dimension: the dimension is known only when the first model
-- arrives, and then postgres.py creates a partial HNSW index on
-- (embedding::vector(dim)) WHERE dim = <dim> (one model at a time, so one such index).
CREATE TABLE vectors (
    message_rowid bigint NOT NULL REFERENCES messages (rowid) ON DELETE CASCADE,
    model text NOT NULL,
    dim integer NOT NULL,
    embedding vector NOT NULL,
    PRIMARY KEY (model, message_rowid)
);
CREATE INDEX vectors_message ON vectors (message_rowid);

CREATE TABLE jobs (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    task text NOT NULL,
    payload jsonb NOT NULL DEFAULT '{}',
    job_key text,
    state text NOT NULL DEFAULT 'queued',
    attempts integer NOT NULL DEFAULT 0,
    max_attempts integer NOT NULL DEFAULT 5,
    last_error text,
    run_at timestamptz NOT NULL,
    locked_by text,
    locked_at timestamptz,
    created_at timestamptz NOT NULL
);
CREATE INDEX jobs_due ON jobs (state, run_at);
CREATE UNIQUE INDEX jobs_live_key ON jobs (job_key) WHERE job_key IS NOT NULL AND state IN ('queued', 'running');

-- RFC 7396 merge patch, as SQLite's json_patch: objects merge recursively, null deletes.
CREATE FUNCTION palimpsest_merge_patch(target jsonb, patch jsonb) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    result jsonb;
    k text;
    v jsonb;
BEGIN
    IF patch IS NULL OR jsonb_typeof(patch) <> 'object' THEN
        RETURN patch;
    END IF;
    result := CASE WHEN jsonb_typeof(target) = 'object' THEN target ELSE '{}'::jsonb END;
    FOR k, v IN SELECT key, value FROM jsonb_each(patch) LOOP
        IF jsonb_typeof(v) = 'null' THEN
            result := result - k;
        ELSE
            result := jsonb_set(result, ARRAY[k], palimpsest_merge_patch(result -> k, v));
        END IF;
    END LOOP;
    RETURN result;
END;
$$;
