/*
 * limits.h: every bound spaced enforces, in one place.
 *
 * The user-visible ones are those docs/api.md and docs/operations.md list;
 * the rest bound what crosses a process boundary (msgpack, CDP, config).
 * Nothing outside this header may invent a size.
 */
#ifndef CM_LIMITS_H
#define CM_LIMITS_H

/* HTTP and task inputs: what a client may send. */
#define CM_BODY_MAX (64 * 1024)   /* request body */
#define CM_ARGS_MAX (16 * 1024)   /* task args, serialized */
#define CM_GRANTED_MAX 32         /* granted_capabilities entries */
#define CM_ID_MAX 64              /* ids, request_id, operation_id */
#define CM_CAPABILITY_MAX 255     /* capability name */
#define CM_ERROR_CODE_MAX 64      /* error_code, last_error_code */
#define CM_ERROR_MESSAGE_MAX 1024 /* redacted error_message */
#define CM_RESULT_MAX (64 * 1024) /* result and event payload */
#define CM_NAME_MAX 255           /* names, labels, versions, hosts */
#define CM_JSON_DEPTH_MAX 32      /* nesting of any JSON input */

#define CM_TIMEOUT_DEFAULT_S 60
#define CM_TIMEOUT_MIN_S 1
#define CM_TIMEOUT_MAX_S 600
#define CM_WAIT_MAX_S 30 /* ?wait= long-poll */

#define CM_SPACES_PER_WS_DEFAULT 64
#define CM_SPACES_PER_WS_MAX 100000 /* max_spaces_per_workspace */
#define CM_MANAGED_BROWSERS_DEFAULT 2
#define CM_MANAGED_BROWSERS_MAX 256 /* managed_browsers */
#define CM_LIST_LIMIT_DEFAULT 20
#define CM_LIST_LIMIT_MAX 100
#define CM_EVENTS_LIMIT_DEFAULT 100
#define CM_EVENTS_LIMIT_MAX 100

/* Rows in one admin listing (workspaces, principals, bundles, instances). */
#define CM_ADMIN_LIST_MAX 1000

/* Provisioning inputs. */
#define CM_MANIFEST_MAX (64 * 1024) /* runtime bundle manifest */
#define CM_BUNDLE_CAPS_MAX 64       /* capabilities in one bundle */
#define CM_SCHEMA_PROPS_MAX 32      /* properties in one args schema */
#define CM_SCHEMA_ENUM_MAX 64       /* values in one enum */
#define CM_SCHEMA_ONEOF_MAX 8       /* branches of one oneOf */
#define CM_ENDPOINT_MAX 2048        /* instance endpoint (secret) */
#define CM_PROFILE_MAX 1024         /* instance profile path (secret) */
#define CM_INSTANCE_CONFIG_MAX (16 * 1024)
#define CM_POLICY_MAX (16 * 1024) /* network policy JSON */
#define CM_POLICY_HOSTS_MAX 64    /* allow_hosts entries */
#define CM_HOST_MAX 253           /* DNS name */
#define CM_PUBLIC_HOSTS_MAX 8     /* names in public_hosts */
#define CM_URL_MAX 2048
#define CM_SECRETS_MAX 16 /* literal secrets given to the redactor */
#define CM_SECRET_MIN 4   /* shorter literals are not redacted */

/* Internal messages. */
#define CM_MSG_MAX (8 * 1024 * 1024) /* one msgpack message: 100 events */
#define CM_PROTO_LIST_MAX 1024       /* records in one reply list */
#define CM_TOPIC_MAX 160
/*
 * One request to the store, of any op that carries no artifact: its
 * largest fields (a manifest, a result) are 64 KiB each.
 */
#define CM_REQ_MSG_MAX (128 * 1024)
/*
 * An actor.finish with its artifact, the largest request the store takes:
 * the bound of the store's receive socket (store/loop.c).  Every other
 * op is refused past CM_REQ_MSG_MAX by the decoder (common/proto.c).
 */
#define CM_STORE_RECV_MAX (CM_ARTIFACT_MAX + CM_REQ_MSG_MAX)
/*
 * Spaces in one page of sup.list_active, ordered by space_id after
 * after_id: a page shorter than this is the last one.
 */
#define CM_ACTIVE_PAGE_MAX 512
/*
 * Requests in one transaction.  Each request's reply waits for its whole
 * group to run, so past a few dozen writes a bigger group only delays
 * replies: in the store engine alone a write took 36.1 and 38.1 us in
 * groups of 32, 33.4 and 35.9 us in groups of 64, while at 64 clients
 * groups of up to 256 came in bursts, a long one then a few short ones.
 * The fsync is shared whatever the bound: the acker syncs once for every
 * group waiting.
 */
#define CM_GROUP_COMMIT_MAX 32
/* Idle claims the store holds at once (store/held.c), the most it holds
 * one (a wait_ms above it is cut to it), and the pipes the loop hears
 * closed between two of its turns (past it, every held claim is
 * answered). */
#define CM_STORE_HELD_MAX 4096
#define CM_CLAIM_WAIT_MAX_MS 1000
/* After a finish its actor claims at once: for so long a queued task of
 * its Space wakes no one through the supervisor (store/held.h). */
#define CM_CLAIM_NEXT_MS 1000
#define CM_STORE_PIPES_GONE_MAX 256
#define CM_STORE_QUEUE_MAX 256 /* requests and replies queued on the socket */
/*
 * Requests one client socket may have outstanding at the store.  nng
 * 1.5.2's raw REP queues 64 replies for one pipe and drops any more (its
 * xrep0 pipe send queue); the requester then waits for its re-send.
 */
#define CM_RPC_OUTSTANDING_MAX 64
/* REQ re-sends a request after this long without a reply: nng's own 60 s
 * would leave a request lost to a store restart waiting a minute, and the
 * store answers a re-sent write from its op_id memory. */
#define CM_RPC_RESEND_MS 2000
/* A lost pipe's redial is logged at most once per this (common/rpc.c). */
#define CM_RPC_REDIAL_LOG_MS 30000
/* How often a loop looks at nng's error counters for a listener that nng
 * stopped, and how long a listener whose errors moved has to take in a
 * connection before it is judged stopped (common/listen.h). */
#define CM_LISTEN_LOOK_MS 1000
#define CM_LISTEN_PROBE_MS 2000

#define CM_RPC_TIMEOUT_MS 10000 /* a store call, unless its caller says */
/* One attempt of a synchronous store call; a timed-out attempt is made
 * again, with the same message, on a dialer checked for a pipe. */
#define CM_RPC_ATTEMPT_MS 3000
/* The least time between two attempts of an asynchronous call. */
#define CM_RPC_RETRY_MIN_MS 100
#define CM_ACK_GROUPS 4 /* committed groups waiting for their WAL sync */
/*
 * Log frames that start a checkpoint (store/wal.c), and past which the
 * writer checkpoints itself.  A checkpoint copies each hot page once however
 * many frames hold it: every 1,000 frames it cost 12.1% of a core at 64
 * clients, every 4,000 frames 7.8%.  The log stays near 63 MiB at most.
 */
#define CM_WAL_CHECKPOINT_PAGES 4000
#define CM_WAL_MAX_PAGES 16000
/*
 * SQLite's own bounds on the store's connections: the page cache, in KiB
 * (cache_size takes it negated), and how long a connection waits for a
 * lock another one holds (the checkpointer's) before it reports busy.
 */
#define CM_DB_CACHE_KIB 65536
#define CM_DB_BUSY_TIMEOUT_MS 5000
/*
 * The PostgreSQL backend (store/db_pg_stmt.c): prepared statements per
 * connection (a power of two, well above the SQL texts there are), $n
 * parameters per statement, and the bytes kept of a server's error.
 */
#define CM_PG_STMT_CACHE 256
#define CM_PG_PARAMS_MAX 32
#define CM_PG_ERRMSG_MAX 512
/*
 * Writing connections the PostgreSQL backend alternates between: one
 * group is built on one while the COMMIT of the group before finishes on
 * the other (store/db_pg.c).  A COMMIT's answer is awaited at most
 * CM_PG_COMMIT_WAIT_MS; past that the server is taken as lost.
 */
#define CM_PG_WRITERS 2
/* Runs of one group when each met another store's transaction (a
 * deadlock PostgreSQL broke): the group is then answered
 * store_unavailable. */
#define CM_PG_CONFLICT_RUNS 4
#define CM_PG_COMMIT_WAIT_MS 60000
/*
 * Statements the PostgreSQL backend sends ahead before it reads their
 * results (store/db_pg_pipe.c): past this many it waits for them, so that
 * neither side's buffers grow without bound.
 */
#define CM_PG_PIPELINE_MAX 512
/*
 * Events across hosts (store/notify.c): announcements of other stores'
 * events read and republished per wake of the loop (the rest wait for the
 * next, at once), and the backoff of the listening connection after it
 * is lost, from the least to the most.
 */
#define CM_NOTIFY_PER_WAKE 64
#define CM_NOTIFY_RETRY_MIN_MS 100
#define CM_NOTIFY_RETRY_MAX_MS 5000
#define CM_NOTIFY_CONNECT_MS 10000 /* an attempt to connect, at most */
/* One announcement: a Space id, then a newline, separators and a
 * sequence's digits, or a notice's kind (a short name). */
#define CM_NOTIFY_LINE_MAX (CM_ID_MAX + 48)
#define CM_OPID_TTL_MS (10 * 60 * 1000)
#define CM_OPID_PRUNE_MAX 1000 /* expired op_ids deleted at once when idle */
#define CM_PUB_BUF 8192        /* nng SENDBUF/RECVBUF on pub/sub */
/* The store's beat (pr_beat_encode): sent when no event has left for so
 * long. */
#define CM_STORE_BEAT_MS 250
/* The api's view of Spaces (api/view.h): its details, lists and
 * workspaces' counters, and how long the feed may be silent (four beats)
 * before no answer of it is served. */
#define CM_API_VIEW_SLOTS 4096
#define CM_API_VIEW_LISTS 256      /* lists kept, by their asks */
#define CM_API_VIEW_WORKSPACES 256 /* workspaces' change counters */
#define CM_API_VIEW_QUIET_MS (4 * CM_STORE_BEAT_MS)

/* Metrics of the api (api/metrics.h). */
#define CM_METRICS_SERIES_MAX 512   /* (route, method, status) series */
#define CM_METRICS_MCP_TOOLS_MAX 64 /* MCP tool labels; past them "other" */
#define CM_METRICS_TASKS_MAX                          \
	4096 /* unfinished tasks tracked for latency; \
	        a power of two */

/* A task's artifact (a screenshot), stored with the task. */
#define CM_ARTIFACT_MAX (4 * 1024 * 1024)
#define CM_MIME_MAX 64                   /* an artifact's mime type */
#define CM_SCREENSHOT_QUALITY_DEFAULT 80 /* jpeg, when quality is unset */

/*
 * The CDP client (space-actor/cdp.h).  The largest message is a screenshot:
 * CM_ARTIFACT_MAX bytes of image are about 5.4 MiB of base64.
 */
#define CM_CDP_MSG_MAX (8 * 1024 * 1024)
#define CM_CDP_OUTBUF_MAX (1024 * 1024) /* queued to the browser */
#define CM_CDP_PENDING_MAX 64           /* commands awaiting a reply */
#define CM_CDP_DEPTH_MAX 64             /* nesting of a CDP message */
/* The first bytes of a dropped message kept to find its command's id. */
#define CM_CDP_HEAD_MAX 32
/* A browser sent SIGKILL is reaped within this, or left to init. */
#define CM_BROWSER_REAP_MS 2000
/* Browsers one process has killed and not yet reaped (act_browser_end);
 * beyond it, a close waits for the reap. */
#define CM_BROWSER_ENDED_MAX 8
/* The nice value a killed browser's processes die at: tearing down a
 * Chromium's processes costs tens of ms of CPU, which the live Spaces
 * and the store come before. */
#define CM_BROWSER_DYING_NICE 19
/* The processes of a browser's tree a kill puts in SCHED_IDLE first (a
 * Chromium runs about 8). */
#define CM_BROWSER_TREE_MAX 64
#define CM_BROWSER_START_MS 30000 /* launch until the page is ready */
#define CM_BROWSER_ENV_MAX 512    /* environment entries a browser gets */
#define CM_BROWSER_LAUNCH_TRIES 3 /* failed launches in a row: unusable */
/* A page told to stop (after a cancel or a timeout) confirms within this,
 * or its browser is started over; below CM_ACTOR_STOP_MS, so that a
 * stopping actor still records the cancel. */
#define CM_PAGE_RESET_MS 500
#define CM_PROFILE_RM_FDS 16 /* fds nftw may hold removing a profile */
/* A managed browser's window, so its viewport, in CSS pixels. */
#define CM_BROWSER_WIDTH 1280
#define CM_BROWSER_HEIGHT 720

/*
 * The remote cdp driver (space-actor/cdp_ws.c, driver_cdp.c).  The
 * endpoint's /json/version answer is small; the HTTP head of the
 * websocket upgrade is bounded like a client's.  Discovery, connection
 * and upgrade together must end within CM_CDP_CONNECT_MS; at close the
 * Space's browser context is disposed within CM_CDP_CLOSE_MS.
 */
#define CM_CDP_VERSION_MAX (16 * 1024)
#define CM_WS_HEAD_MAX (8 * 1024)
#define CM_CDP_CONNECT_MS 10000
#define CM_CDP_CLOSE_MS 1000
#define CM_CURLM_EVENTS 16 /* epoll events curlm.c takes in one step */

/*
 * The supervisor's probe of cdp instances (supervisor/probe.c): every
 * probe_interval_ms (config; this default) each one's /json/version is
 * asked for, and an answer must come within CM_PROBE_TIMEOUT_MS.
 */
#define CM_PROBE_INTERVAL_MS 10000
#define CM_PROBE_INTERVAL_MIN_MS 100
#define CM_PROBE_INTERVAL_MAX_MS 3600000
#define CM_PROBE_TIMEOUT_MS 3000
#define CM_PROBE_MAX 256 /* cdp instances probed by one supervisor */

/* What capabilities return (space-actor/page.c). */
#define CM_SNAPSHOT_CHARS_DEFAULT 16000 /* outline, when max_chars is unset */
#define CM_SNAPSHOT_CHARS_MAX 40000     /* below CM_RESULT_MAX once quoted */
#define CM_SNAPSHOT_REFS_MAX 4096       /* refs one snapshot hands out */
/* Elements a snapshot finds clickable by a listener alone, each one
 * round trip (page_listeners.c). */
#define CM_SNAPSHOT_LISTENED_MAX 64
#define CM_SNAPSHOT_DEPTH_MAX 128 /* outline levels walked */
#define CM_SNAPSHOT_NEST_MAX 1024 /* tree levels walked, wrappers too */
#define CM_SNAPSHOT_NAME_MAX 200  /* characters of one node's name */
/* Refs a document's snapshots keep together (an element keeps its ref in
 * every snapshot of its document, so the pages of a long outline act
 * together); past it the numbering starts over. */
#define CM_SNAPSHOT_REFS_KEPT_MAX 65536
/*
 * The snapshot's script (space-actor/snapshot_js.h) bounds its own reply:
 * it returns at most CM_SNAPSHOT_NODES_MAX nodes, each a line whose bytes
 * it counts against max_chars, so the reply is below 6 bytes a counted
 * byte (the JSON escape of a control character) plus 160 bytes a node of
 * JSON around it: far below CM_CDP_MSG_MAX (page_snapshot.c checks it).
 * It visits at most CM_SNAPSHOT_WALK_MAX nodes of the document, and a
 * name gathers its text from at most CM_SNAPSHOT_NAME_WALK_MAX of them.
 */
#define CM_SNAPSHOT_NODES_MAX 10000
#define CM_SNAPSHOT_WALK_MAX 200000
#define CM_SNAPSHOT_NAME_WALK_MAX 1000
/* Each command of the snapshot's world made ahead of it, as its document
 * commits (space-actor/page_snapshot.c): a snapshot waits for it no
 * longer than this, or its task's time. */
#define CM_SNAPSHOT_AHEAD_MS 5000
#define CM_TEXT_MAX 32000 /* extract_text */
/* A form's capabilities (space-actor/page_form.c): the UTF-16 units of a
 * field's value fill reads back (six bytes each at most, escaped, well
 * below CM_RESULT_MAX), and the selected values select_option returns
 * (as many as it may name). */
#define CM_FIELD_VALUE_MAX 8192
#define CM_SELECT_OPTIONS_MAX 64
/* The moves a drag makes between its press and its release
 * (space-actor/page_pointer.c): enough for a slider or a sortable list
 * that follows the mouse to see it travel. */
#define CM_DRAG_MOVES 8
/* A navigation waiting for load ends this long after its document's
 * DOMContentLoaded with "loading": true: one subresource that never
 * answers (a tracker, an image) must not fail the navigation. */
#define CM_NAV_LOAD_GRACE_MS 2000
/* Tabs a Space's page may have opened and still open (popups, links to a
 * new tab); past it a new one is closed as it opens. */
#define CM_TABS_MAX 8
/*
 * The frames of a page (space-actor/page_frames.c).  Its out-of-process
 * frames, each attached as a session of its own so that its requests meet
 * the network policy, at most CM_FRAMES_MAX at once and no deeper than
 * CM_FRAME_DEPTH_MAX frames in frames; one past either is held before it
 * runs (it shows and loads nothing).  A snapshot reads the content of at
 * most CM_FRAMES_MAX frames, as deep, and says when it left some out.
 */
#define CM_FRAMES_MAX 16
#define CM_FRAME_DEPTH_MAX 4
/* Bytes of a download's suggested name a result or an event shows. */
#define CM_DOWNLOAD_NAME_MAX 200
/* Bytes of a dialog's message, and of a prompt's default text, that its
 * dialog event shows (redacted, then cut on a character boundary). */
#define CM_DIALOG_MESSAGE_MAX 500
/* Bytes of a page's title its header shows (cut on a character
 * boundary). */
#define CM_PAGE_TITLE_MAX 1024
/* Downloads under way whose end a page's events tell, at most: one begun
 * past them has its begin event only. */
#define CM_PAGE_DOWNLOADS_MAX 8
/*
 * The payload of a page event (space.page_event), as JSON text: the
 * longest a dialog, a tab_opened (its url at most CM_URL_MAX) or a
 * download payload can be, even with every byte of its strings escaped
 * in six (a control character's JSON escape).
 */
#define CM_PAGE_EVENT_PAYLOAD_MAX (16 * 1024)
/* A navigation whose document is a download ends once the download has;
 * the browser begins it within this, or the navigation fails. */
#define CM_NAV_DOWNLOAD_START_MS 5000
/*
 * Files a Space's page downloads during a task (space-actor/page_download.c)
 * and files a client puts on a Space for its page to upload
 * (PUT .../files/{name}; the upload capability).  A download is the task's
 * one artifact: larger than CM_ARTIFACT_MAX it is canceled, never stored.
 * A Space file is at most CM_UPLOAD_MAX bytes under a name of at most
 * CM_FILE_NAME_MAX bytes of [A-Za-z0-9._-]; a Space holds at most
 * CM_SPACE_FILES_MAX of them; an upload sets 1..CM_UPLOAD_FILES_MAX.
 */
#define CM_UPLOAD_MAX (4 * 1024 * 1024)
#define CM_FILE_NAME_MAX 128
#define CM_SPACE_FILES_MAX 64
#define CM_UPLOAD_FILES_MAX 8
/*
 * The browser reads an upload's files when the page sends them (a form's
 * submit), not when they are set: the files of the last
 * CM_UPLOAD_TASKS_KEPT uploads stay on disk until the Space closes, an
 * older one's go as a later upload ends.  At most CM_UPLOAD_TASKS_KEPT *
 * CM_UPLOAD_FILES_MAX * CM_UPLOAD_MAX bytes (256 MiB) per Space.
 */
#define CM_UPLOAD_TASKS_KEPT 8

/*
 * The supervisor (supervisor/main.c).  Its store calls are asynchronous;
 * an attempt waits CM_SUP_STORE_ATTEMPT_MS for its reply and is made
 * again, with the same op_id, until the store answers.
 */
#define CM_SUP_STORE_ATTEMPT_MS 3000
#define CM_SUP_RESCAN_MS 2000     /* the store is asked what should run */
#define CM_SUP_SWEEP_MS 5000      /* expired leases are swept */
#define CM_SUP_JOB_RETRY_MS 100   /* a store job the store failed, again */
#define CM_SUP_BOOT_RETRY_MS 1000 /* a failed bootstrap starts over */
/*
 * SIGTERM: the api and the actors get CM_SUP_STOP_CHILDREN_MS to exit,
 * and CM_SUP_STOP_PER_ACTOR_MS more for each actor, to at most
 * CM_SUP_STOP_CHILDREN_MAX_MS; then the store CM_SUP_STOP_STORE_MS; a
 * child still there is killed (an actor with its process group) and
 * reaped within CM_SUP_KILL_WAIT_MS.  An actor's own stop takes up to
 * CM_ACTOR_STOP_MS, and then its browser's end and its profile's
 * removal, which compete with the dying browser for the CPUs and the
 * disk: an idle Space's stop took 62 to 463 ms on 2 CPUs, the more with
 * two synchronous writers and three spinning processes beside it, and
 * one stop on a machine running the test suite took past 2.2 s.  The
 * grace is four seconds more, so that a loaded machine does not turn an
 * orderly stop into a kill (which leaves the profile to the next start's
 * sweep), and many actors stopping at once on few CPUs get the time to
 * be scheduled.  The store's last step is its database's close (SQLite
 * checkpoints its log), measured at 26 ms on a quiet machine under the
 * sanitizers and past 500 ms on a loaded one.  So spaced exits within
 * 7.4 s with a few actors and 12.4 s at most, whatever its children do.
 */
#define CM_SUP_STOP_CHILDREN_MS (CM_ACTOR_STOP_MS + 4000)
#define CM_SUP_STOP_PER_ACTOR_MS 2
#define CM_SUP_STOP_CHILDREN_MAX_MS 10000
#define CM_SUP_STOP_STORE_MS 2000
#define CM_SUP_KILL_WAIT_MS 200
/*
 * The supervisor's table of children (sup.status) comes a page at a
 * time, the rows after a serial in the order they were added; whoever
 * reads it (the api's GET /api/v1/admin/status and /metrics) walks it
 * to CM_SUP_STATUS_ROWS_MAX rows, past which it says the table is too
 * large rather than show a part of it.  1,500 open Spaces are about
 * 1,500 rows.
 */
#define CM_SUP_STATUS_PAGE_MAX 512
#define CM_SUP_STATUS_ROWS_MAX 8192

/*
 * The HTTP front (api/http.c).  One loop thread owns every client socket,
 * so a client that stalls costs a connection slot and a few KiB, never a
 * thread: these bounds, not thread counts, keep the front answering.
 */
#define CM_API_WORKERS 16      /* threads that run requests against the store */
#define CM_HTTP_CONNS_MAX 4096 /* open connections; past it a 503 */
#define CM_HTTP_FD_RESERVE 128 /* fds the api keeps for everything else */
#define CM_HTTP_REFUSING_MAX 64 /* refused connections still being told so */
#define CM_HTTP_LINE_MAX (CM_URL_MAX + 32) /* request line; past it 414 */
#define CM_HTTP_HEADERS_MAX (8 * 1024)     /* header fields; past them 431 */
#define CM_HTTP_RES_HEADERS_MAX 768        /* a route's own header lines */
/* An answer's head: the status line and fixed headers, and a route's own. */
#define CM_HTTP_RES_HEAD_MAX (256 + CM_HTTP_RES_HEADERS_MAX)
#define CM_HTTP_HEAD_TIMEOUT_MS 5000   /* first byte to the end of the head */
#define CM_HTTP_BODY_TIMEOUT_MS 10000  /* end of the head to end of the body */
#define CM_HTTP_IDLE_TIMEOUT_MS 15000  /* no request under way */
#define CM_HTTP_WRITE_TIMEOUT_MS 30000 /* pending output, no byte accepted */
#define CM_HTTP_LINGER_MS 2000         /* reading what is left before a close */
#define CM_HTTP_TICK_MS 100            /* how often deadlines are looked at */
#define CM_HTTP_ACCEPT_BATCH 64 /* accepts a pass, so reads are not starved */
#define CM_HTTP_ACCEPT_PAUSE_MS 100 /* out of fds: accept again after this */
#define CM_HTTP_EPOLL_BATCH 256     /* events one epoll_wait takes */
#define CM_API_RPC_TIMEOUT_MS 10000 /* a worker's call to the store */
/*
 * Server-Sent Events (api/events.c).  A replay or a gap is read from the
 * store a page of CM_EVENTS_LIMIT_MAX events at a time, the next page only
 * once the client has taken the last one.  Live events pile up to
 * CM_SSE_PENDING_MAX; past it a client that took no byte for CM_SSE_STALL_MS
 * is cut off, and one that is reading gets the rest from the store later.
 */
#define CM_SSE_PENDING_MAX (256 * 1024)
/* A stream's kernel send buffer (the kernel doubles it): left to grow,
 * it reached 4 MiB per stalled reader before the cut could see a stall. */
#define CM_SSE_SNDBUF (64 * 1024)
#define CM_SSE_STALL_MS 1000
#define CM_SSE_HEARTBEAT_MS 15000
#define CM_EVENTS_RPC_TIMEOUT_MS 5000 /* a page of events from the store */
/* ?wait= requests are parked, not held by a thread: each is looked at again
 * when its task's finishing event (a close's: space_closed) arrives, and
 * every CM_WAIT_RECHECK_MS in case the feed dropped it.  The last
 * CM_WAIT_RECENT finished task ids and closed Spaces' ids are kept for a
 * request parked just after what it waits for. */
#define CM_WAIT_RECHECK_MS 1000
#define CM_WAIT_RECENT 256

/* Leases: an actor renews its running task's lease every CM_HEARTBEAT_MS;
 * a lease not renewed within CM_LEASE_TTL_MS ends its task failed (or
 * cancelled, when a cancel was asked), and that task never runs again. */
#define CM_LEASE_TTL_MS 15000
#define CM_HEARTBEAT_MS 5000
/* Expired leases one sweep finalises; the next sweep takes the rest. */
#define CM_LEASE_SWEEP_MAX 256
/* A lease written by another host's store is due only this long after it
 * expired by this host's clock: the hosts' clocks may disagree by up to
 * this much without a live task elsewhere being ended. */
#define CM_LEASE_FOREIGN_GRACE_MS 5000

/*
 * The actor (space-actor/actor.c).  Its store calls are asynchronous: each
 * is made of attempts (common/rpc.h), and the loop keeps stepping the
 * driver while one is under way.
 */
#define CM_ACTOR_IDLE_POLL_MS 1000 /* idle: ask the store even unwoken */
/*
 * An idle actor's claim asks the store to hold it this long when no task
 * waits (actor.claim wait_ms): a task submitted meanwhile is claimed in
 * the submit's own transaction and the claim answered with it.  Below
 * CM_RPC_RESEND_MS (no re-send of a held claim) and CM_ACTOR_IDLE_POLL_MS.
 * A stopping actor drops its held claim rather than wait for it.
 */
#define CM_CLAIM_WAIT_MS 800
#define CM_ACTOR_ATTEMPT_MS 2000 /* one attempt of any actor call */
/* A claim or heartbeat is one attempt: the idle timer or the next beat
 * makes the next one, and an outcome waiting to be recorded goes first. */
#define CM_ACTOR_ONE_SHOT_MS 1000
#define CM_ACTOR_RETRY_MS 100 /* after the store answered with an error */
/*
 * SIGTERM: the actor cancels its task and tries this long to record the
 * outcome, then exits whatever the store does (non-zero when an outcome
 * stayed unrecorded, so the supervisor finalises the task).
 */
#define CM_ACTOR_STOP_MS 1000
/*
 * Within it, what a stopping actor (or standby) waits for the kernel to
 * free the browser it killed, once the profile is gone: a few ms at the
 * browser's own priority (act_browser_stopping), and a backstop on a
 * host too busy for that.  SIGKILL is pending on every process of the
 * browser, none runs code again, and a leader left is init's to reap.
 */
#define CM_ACTOR_STOP_REAP_MS 200
/* Driver fds in one poll; the egress proxy's (CM_EGRESS_POLLFDS) come
 * on top. */
#define CM_ACTOR_POLLFDS 8
#define CM_ACTOR_WAKE_READ 64   /* wake-pipe bytes drained per read */
#define CM_ACTOR_BLOCKED_MAX 16 /* network_blocked events not yet recorded */
/* One network_blocked event per host and reason this often, at most: a
 * browser retries what was refused, and the log is the Space's. */
#define CM_ACTOR_BLOCKED_REPEAT_MS 1000
/* Page events (dialog, tab_opened, download) not yet recorded, and how
 * many are queued a second at most: a page that opens dialogs in a loop
 * must not fill the Space's log; past either, an event is only logged. */
#define CM_ACTOR_PAGE_EVENTS_MAX 16
#define CM_ACTOR_PAGE_EVENTS_PER_S 20
/*
 * Warm standby.  The supervisor hands a Space to a standby actor with one
 * message on its wake pipe: CM_WAKE_ADOPT, the Space's id, then '\n'
 * (at most CM_WAKE_ADOPT_LEN bytes, so one atomic pipe write).  A
 * standby that keeps crashing (the actor policy gives up) rests this long
 * before its instance gets another.
 */
#define CM_WAKE_ADOPT 'a'
#define CM_WAKE_ADOPT_LEN (CM_ID_MAX + 2)
/*
 * A Space's actor is woken with one byte: CM_WAKE_CLOSE when the notice
 * was the Space's close_requested (the actor may tear down without asking
 * the store first), CM_WAKE_QUEUED when a task was queued (an actor that
 * runs one learns of the next from its finish), CM_WAKE_ANY for any other
 * (the actor asks the store).
 */
#define CM_WAKE_ANY 'w'
#define CM_WAKE_CLOSE 'c'
#define CM_WAKE_QUEUED 'q'
#define CM_SUP_STANDBY_REST_MS 60000

/*
 * The egress proxy of a managed browser (space-actor/egress.h).  One per
 * actor, on 127.0.0.1 at an ephemeral port.  Per connection it holds a
 * request head of at most CM_EGRESS_HEAD_MAX bytes (past it a 431), then
 * CM_EGRESS_BUF bytes each way: it never holds a whole body.
 * egress_connections (config) bounds the connections of one Space, from
 * 1 to CM_EGRESS_CONNS_MAX (Chromium opens at most 32 to one proxy);
 * egress_bytes_per_second the bytes both ways together, a token bucket
 * holding at most one second of them.
 */
#define CM_EGRESS_HEAD_MAX (8 * 1024)
#define CM_EGRESS_BUF (16 * 1024)
#define CM_EGRESS_CONNS_DEFAULT 64
#define CM_EGRESS_CONNS_MAX 128
#define CM_EGRESS_BPS_DEFAULT (64 * 1024 * 1024)
#define CM_EGRESS_BPS_MIN (64 * 1024)
#define CM_EGRESS_BPS_MAX (1024 * 1024 * 1024)
#define CM_EGRESS_ADDRS_MAX 8         /* resolved addresses judged and tried */
#define CM_EGRESS_DNS_FDS 4           /* c-ares sockets in one poll */
#define CM_EGRESS_DNS_TIMEOUT_MS 2000 /* one try of one DNS server */
#define CM_EGRESS_DNS_TRIES 2
#define CM_EGRESS_HEAD_MS 10000    /* accept to the end of the head */
#define CM_EGRESS_CONNECT_MS 10000 /* resolve and connect, all addresses */
#define CM_EGRESS_IDLE_MS 120000   /* a relay that moves no byte */
#define CM_EGRESS_SECRET_BYTES 24  /* the per-launch proxy password */
#define CM_EGRESS_REFILL_MS 5      /* bucket empty: look again after */
#define CM_PROXY_URL_MAX 32        /* http://127.0.0.1:<port> */
/* Refusals the proxy remembers (host, when), the newest over the oldest:
 * the page asks whether the host of a navigation that failed with no
 * response (a refused CONNECT) was refused during its call. */
#define CM_EGRESS_RECENT 16
#define CM_EGRESS_POLLFDS (1 + CM_EGRESS_DNS_FDS + 2 * CM_EGRESS_CONNS_MAX)

/* Config and files. */
#define CM_CONF_LINE_MAX 1024
#define CM_CONF_VALUE_MAX 512
#define CM_CONFIG_FD_MAX (32 * 1024) /* a resolved config sent to a child */
#define CM_PATH_MAX 1024
#define CM_IPC_PATH_MAX 107 /* sun_path less its NUL */
#define CM_LOG_LINE_MAX 2048
#define CM_FD_ARG_MAX 65535 /* highest fd a --notify-fd style flag names */

/* Tokens: "spd_" and 32 random bytes in unpadded base64url. */
#define CM_TOKEN_RANDOM 32   /* random bytes in a new token */
#define CM_TOKEN_LEN 48      /* 4 + 43 characters and the NUL */
#define CM_TOKEN_HASH_LEN 65 /* 64 lowercase hex digits and the NUL */
#define CM_TOKEN_MAX 256     /* longest bearer token accepted */
#define CM_TOKEN_TTL_MAX_S (10LL * 365 * 24 * 3600) /* expires_in_seconds */
/*
 * How long the api may use a token's resolution (its principal, its
 * memberships) without asking the store again.  A token revoked or a
 * membership removed elsewhere (another api process) is refused within
 * 1 s: this, and the request that comes after it.
 */
#define CM_AUTH_CACHE_TTL_MS 500

/*
 * spacectl, the command-line client (spacectl/).  Every answer it reads is
 * bounded before jansson sees it: a JSON answer by CM_CTL_JSON_MAX (a page
 * of CM_EVENTS_LIMIT_MAX tasks, each with a CM_RESULT_MAX result, fits),
 * an artifact by CM_ARTIFACT_MAX, one line of an event stream by
 * CM_CTL_SSE_LINE_MAX (an event's JSON, its payload at most CM_RESULT_MAX).
 */
#define CM_CTL_JSON_MAX (16 * 1024 * 1024)
#define CM_CTL_SSE_LINE_MAX (4 * CM_RESULT_MAX)
#define CM_CTL_CONNECT_MS 5000  /* connecting to the api */
#define CM_CTL_REQUEST_MS 60000 /* one request, a ?wait= long-poll included */
/* A stream that sends nothing (not even its heartbeat) this long is dead. */
#define CM_CTL_STALL_S (3 * CM_SSE_HEARTBEAT_MS / 1000)
/* A dropped stream is resumed after a delay that doubles from MIN to MAX;
 * an event received resets it.  After CM_CTL_RESUME_MAX attempts in a row
 * that brought no event, spacectl gives up (exit 1). */
#define CM_CTL_BACKOFF_MIN_MS 100
#define CM_CTL_BACKOFF_MAX_MS 5000
#define CM_CTL_RESUME_MAX 20
#define CM_CTL_ARGS_MAX 32 /* positional arguments of one command */
#define CM_CTL_COL_MAX 40  /* widest table cell; longer ones are cut */

/*
 * MCP (api/mcp*.c).  A session is a protocol convenience held in the
 * api's memory: at most CM_MCP_SESSIONS_MAX in all and
 * CM_MCP_SESSIONS_PER_PRINCIPAL per principal, each forgotten after
 * CM_MCP_SESSION_IDLE_S without a request.  A JSON-RPC id is a string of
 * at most CM_MCP_ID_MAX bytes or an integer; a message nests at most
 * CM_MCP_DEPTH_MAX arrays and objects (its body is bounded by
 * CM_BODY_MAX).  A tool call waits for its task at most CM_WAIT_MAX_S,
 * like ?wait=; a screenshot's image travels in the answer (an artifact,
 * at most CM_ARTIFACT_MAX before base64).
 */
#define CM_MCP_SESSIONS_MAX 256
#define CM_MCP_SESSIONS_PER_PRINCIPAL 16
#define CM_MCP_SESSION_IDLE_S 3600
#define CM_MCP_ID_MAX 128
#define CM_MCP_DEPTH_MAX 32
#define CM_MCP_SESSION_ID_BYTES 24 /* random bytes, hex in the header */
#define CM_MCP_PENDING_MAX 8       /* tool calls in flight per session */

/*
 * An operator's take-over of a Space (store/ops_hold.c): a hold lasts
 * ttl_s (1..CM_TAKEOVER_TTL_MAX_S; when not given, the config's
 * takeover_ttl, CM_TAKEOVER_TTL_DEFAULT_S by default), renewed by the holder's
 * take-over again; the supervisor's sweep (every CM_SUP_SWEEP_MS) ends those
 * past their deadline, at most CM_HOLD_SWEEP_MAX a sweep, and a submit ends its
 * Space's at once.
 */
#define CM_TAKEOVER_TTL_DEFAULT_S 600
/* The capability an agent calls for an operator: the store ends it at
 * once, marking the Space help_requested; no runtime runs it. */
#define CM_CAP_REQUEST_HELP "request_help"
#define CM_TAKEOVER_TTL_MAX_S 3600
#define CM_HOLD_SWEEP_MAX 64

/*
 * Live view (space-actor/live*.c, api/live.c).  While someone watches, a
 * Space's actor runs Page.startScreencast on its current page: JPEG at
 * CM_LIVE_JPEG_QUALITY, at most CM_LIVE_MAX_WIDTH x CM_LIVE_MAX_HEIGHT,
 * every CM_LIVE_EVERY_NTH_FRAME-th frame the page paints, and never more
 * than CM_LIVE_FRAMES_PER_S a second (a frame past it is acked and
 * dropped).  A frame over CM_LIVE_FRAME_MAX bytes of JPEG is dropped.  A
 * watch is a lease of CM_LIVE_LEASE_MS that the api renews every
 * CM_LIVE_RENEW_MS while a viewer is attached: an api that died stops
 * the screencast within the lease.  At most CM_VIEWERS_MAX viewers per
 * Space; the api gives an actor CM_LIVE_CALL_MS to answer a control
 * request, and a viewer that took no byte for CM_LIVE_STALL_MS is cut.
 * Operator input: at most CM_LIVE_INPUT_PER_S events a second, key
 * names of CM_LIVE_KEY_MAX bytes, typed text of CM_LIVE_TEXT_MAX bytes,
 * wheel deltas within CM_LIVE_WHEEL_MAX pixels; the target it names is
 * cut to CM_LIVE_TARGET_NAME_MAX bytes.
 */
#define CM_VIEWERS_MAX 4
#define CM_LIVE_JPEG_QUALITY 60
#define CM_LIVE_MAX_WIDTH CM_BROWSER_WIDTH
#define CM_LIVE_MAX_HEIGHT CM_BROWSER_HEIGHT
#define CM_LIVE_EVERY_NTH_FRAME 1
#define CM_LIVE_FRAMES_PER_S 10
#define CM_LIVE_FRAME_MAX (1024 * 1024)
#define CM_LIVE_LEASE_MS 10000
#define CM_LIVE_RENEW_MS 3000
#define CM_LIVE_CALL_MS 3000
#define CM_LIVE_STALL_MS 10000
#define CM_LIVE_SUB_BUF 4      /* frames queued for the api: the latest wins */
#define CM_LIVE_SPACES_MAX 256 /* Spaces watched through one api at once */
#define CM_LIVE_INPUT_PER_S 50
#define CM_LIVE_KEY_MAX 32
#define CM_LIVE_TEXT_MAX 256
#define CM_LIVE_WHEEL_MAX 10000
#define CM_LIVE_TARGET_NAME_MAX 128
#define CM_LIVE_INPUT_MS 2000 /* an input's CDP calls, all told */
/* The live frame message on the actor's PUB: the frame's msgpack record
 * around its JPEG. */
#define CM_LIVE_MSG_MAX (CM_LIVE_FRAME_MAX + 1024)

/*
 * A limit spelt into SQL text at compile time: " LIMIT " CM_STR(CM_X).
 * Only for limits defined as a bare integer literal.
 */
#define CM_STR(x) CM_STR_(x)
#define CM_STR_(x) #x

#endif
