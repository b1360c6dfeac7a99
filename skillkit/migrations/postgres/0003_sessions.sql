-- Agent sessions (`SessionStore for Sql`): a head row per session holding
-- its version (the number of its last item), which every write compares
-- and sets, so a writer that did not see the latest items is refused; and
-- the items, numbered from 1, each a history message as JSON. `IF NOT
-- EXISTS`: the sessions outlive a store of skills dropped and created again.
CREATE TABLE IF NOT EXISTS skillkit_sessions (
    session TEXT PRIMARY KEY NOT NULL,
    version BIGINT NOT NULL,
    -- Milliseconds since 1970 of the first write and of the last.
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL,
    -- A title for people, and the agent holding the conversation.
    title TEXT,
    agent TEXT
);

CREATE TABLE IF NOT EXISTS skillkit_session_items (
    session TEXT NOT NULL,
    seq BIGINT NOT NULL,
    message TEXT NOT NULL,
    PRIMARY KEY (session, seq)
);
