-- SkillKit's SQL provider: skills and agents as rows, grouped into kits.
-- Every write bumps `skillkit_revision.revision` and stamps the rows it
-- touches with the new value; a query reads the counter first and re-reads
-- only the rows stamped after what it already holds. A delete leaves a
-- tombstone (`deleted = 1`) so that readers learn of it.

CREATE TABLE skillkit_revision (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    revision INTEGER NOT NULL
);
INSERT INTO skillkit_revision (id, revision) VALUES (1, 0);

CREATE TABLE skillkit_skills (
    kit TEXT NOT NULL,
    -- The bare name (`read` of `files:read`).
    name TEXT NOT NULL,
    -- NULL when `body` holds a whole SKILL.md (frontmatter and markdown).
    description TEXT,
    body TEXT NOT NULL DEFAULT '',
    license TEXT,
    compatibility TEXT,
    -- JSON: an array of strings, an object, an object.
    allowed_tools TEXT NOT NULL DEFAULT '[]',
    metadata TEXT NOT NULL DEFAULT '{}',
    model TEXT,
    required_scope TEXT,
    extra TEXT NOT NULL DEFAULT '{}',
    revision INTEGER NOT NULL,
    deleted INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (kit, name)
);
CREATE INDEX skillkit_skills_revision ON skillkit_skills (revision);

CREATE TABLE skillkit_agents (
    kit TEXT NOT NULL,
    -- 1: the kit's root agent (its AGENT.md); 0: a sub-agent (agents/<name>.md).
    root INTEGER NOT NULL,
    -- A sub-agent's bare name; the root agent's name as written.
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    model TEXT,
    system_prompt TEXT NOT NULL DEFAULT '',
    -- JSON: an array of strings, an object, an object.
    tools TEXT NOT NULL DEFAULT '[]',
    max_turns INTEGER,
    max_agent_depth INTEGER,
    metadata TEXT NOT NULL DEFAULT '{}',
    extra TEXT NOT NULL DEFAULT '{}',
    revision INTEGER NOT NULL,
    deleted INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (kit, root, name)
);
CREATE INDEX skillkit_agents_revision ON skillkit_agents (revision);
CREATE UNIQUE INDEX skillkit_agents_one_root ON skillkit_agents (kit) WHERE root = 1 AND deleted = 0;
