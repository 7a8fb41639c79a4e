-- Hand-written: the runners' doorbell for projects. A project registered, moved to another
-- repository or removed rings 'catcafe_projects', payload-free (PostgreSQL folds identical
-- notifications of a transaction into one): every runner checks again which projects it has
-- clones of (server/runner/capabilities.ts) and then looks for work, instead of leaving a new
-- project's first step waiting for its next periodic check (up to 30 s). Row triggers, so that
-- an upsert that only edits a project's settings rings no one.
CREATE FUNCTION "catcafe_projects_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('catcafe_projects', '');
  RETURN NULL;
END
$$;

CREATE TRIGGER "projects_added_or_removed"
  AFTER INSERT OR DELETE ON "projects"
  FOR EACH ROW EXECUTE FUNCTION "catcafe_projects_changed"();

CREATE TRIGGER "projects_moved"
  AFTER UPDATE OF "repo_path" ON "projects"
  FOR EACH ROW WHEN (OLD."repo_path" IS DISTINCT FROM NEW."repo_path") EXECUTE FUNCTION "catcafe_projects_changed"();
