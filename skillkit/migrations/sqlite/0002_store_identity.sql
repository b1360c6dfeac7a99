-- The store's identity, made anew with the store: a store dropped and
-- created again (by any program) is another store, which a reader holding
-- rows of the old one must read whole, whatever its revision. Every query
-- reads it with the revision.
ALTER TABLE skillkit_revision ADD COLUMN store TEXT NOT NULL DEFAULT '';
UPDATE skillkit_revision SET store = lower(hex(randomblob(16)));
