# device-goals.jq: issue 10's goals judged from results.jsonl (jq -s; device-report.sh writes
# goals.json with it). Each goal is a value computed per round from that round's runs only, then the
# median over the rounds: the peers of one round ran a minute apart, while this host's speed drifts
# between rounds (one binary has measured 300k and 590k IOPS on one row within an hour), so a
# ratio of two medians taken from different rounds can pair a fast round with a slow one.
# A goal is "met" or "missed" on that median, "n/a" when a round never had the peers it needs.

def median: sort | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor]
	else (.[length / 2 - 1] + .[length / 2]) / 2 end;
def r3: if . == null then null else (. * 1000 | round) / 1000 end;

# The goals (issue 10, section 4). rows: a regular expression over row names; metric: what one
# round gives, from `peer`'s run and the others' (see value below).
def goals: [
	{ goal: "page cache: ringvm-fs >= 1.3x the best other peer", rows: "^(rr|rw)-cache-|^seq128k-",
	  peer: "ringvm-fs", metric: "x_best", op: ">=", target: 1.3 },
	{ goal: "O_DIRECT: ringvm-fs >= the best virtiofsd, inline or pool", rows: "^rr-direct-",
	  peer: "ringvm-fs", metric: "x_virtiofsd", op: ">=", target: 1.0 },
	{ goal: "metadata: ringvm-fs >= 1.5x the best other peer", rows: "^meta-",
	  peer: "ringvm-fs", metric: "x_best", op: ">=", target: 1.5 },
	{ goal: "CPU per request at depth 16 <= 2.5 us", rows: "^rr-cache-qd16",
	  peer: "ringvm-fs", metric: "cpu_us", op: "<=", target: 2.5 },
	{ goal: "virtio-blk >= 0.8x the host's io_uring at depth 64, one worker core", rows: "^rr-(cache|direct)-qd64$",
	  peer: "ringvm-blk", metric: "x_host", op: ">=", target: 0.8 },
	{ goal: "virtio-blk adds <= 2 us of mean latency at depth 1", rows: "^rr-(cache|direct)-qd1$",
	  peer: "ringvm-blk", metric: "added_us", op: "<=", target: 2.0 }
];

# One round's runs of one row, sorted out for peer $p: its run, the host's, the best other peer's
# (never ringvm, never the host) and the best virtiofsd's (inline or pool); null where none ran.
def roles($p):
	{ me: (map(select(.peer == $p)) | .[0]),
	  host: (map(select(.peer == "host")) | .[0]),
	  best: (map(select(.target != "host" and (.peer | startswith("ringvm") | not))) | max_by(.iops)),
	  vfsd: (map(select(.peer | startswith("virtiofsd"))) | max_by(.iops)) };

def ratio($a; $b): if $a == null or $b == null or $b.iops <= 0 then null else $a.iops / $b.iops end;

# Whether a round's runs in one mode hold every yardstick the metric needs: $ran names every peer
# that ran in that round (either mode). A best peer whose run was in the other mode, or kept off
# it, might have been the best: without it the round gives no value in this mode.
def complete($metric; $ran):
	(map(.peer)) as $here
	| if $metric == "x_best" then [$ran[] | select(. != "host" and (startswith("ringvm") | not))] - $here == []
	  elif $metric == "x_virtiofsd" then [$ran[] | select(startswith("virtiofsd"))] - $here == []
	  else true end;

# One round's value of a metric for peer $p among that round's successful runs of one row, in one
# mode; $ran: the peers of that row and round in either mode.
def value($p; $metric; $ran):
	roles($p) as $r
	| if $r.me == null or (complete($metric; $ran) | not) then null
	  elif $metric == "x_best" then ratio($r.me; $r.best)
	  elif $metric == "x_virtiofsd" then ratio($r.me; $r.vfsd)
	  elif $metric == "x_host" then ratio($r.me; $r.host)
	  elif $metric == "cpu_us" then $r.me.peer_cpu_us_per_req
	  elif $metric == "added_us" then (if $r.host == null then null else $r.me.lat_mean_us - $r.host.lat_mean_us end)
	  else null end;

# What the host's own io_uring on the same file (no device in between) gets over the best other peer
# in one round: for reads about the most any device can reach (memory bandwidth, the disk). Not for
# writes: the host's io_uring hands buffered ext4 writes to an io-wq thread (seen: iou-wrk at 75 % CPU).
def limit($metric; $ran): if $metric != "x_best" or (complete($metric; $ran) | not) then null
	else roles("host") | ratio(.host; .best) end;

# Runs kept off their row's mode (device.sh's gate: in_mode false) compare with nothing. A row's
# rounds may have run in either of the host's modes (host_mode: fast, slow; null without the gate):
# each round's value pairs runs of one mode, and each mode gets its own line, judged on its own rounds.
map(select(.status == "ok")) as $all
| ($all | map(select(.in_mode != false))) as $ok
| ($ok | map(.row) | unique) as $rows
| [goals[] as $g | $rows[] | select(test($g.rows)) as $row
	| [$ok[] | select(.row == $row)] | group_by(.host_mode)[] | group_by(.round) as $rounds
	| $rounds[0][0].host_mode as $mode
	| ($rounds | map(.[0].round as $n
		| ([$all[] | select(.row == $row and .round == $n) | .peer] | unique) as $ran
		| value($g.peer; $g.metric; $ran)) | map(select(. != null))) as $vals
	| ($rounds | map(.[0].round as $n
		| ([$all[] | select(.row == $row and .round == $n) | .peer] | unique) as $ran
		| limit($g.metric; $ran)) | map(select(. != null)) | median) as $limit
	| ($vals | median) as $m
	| {
		goal: $g.goal, row: $row, host_mode: $mode, peer: $g.peer, metric: $g.metric, op: $g.op, target: $g.target,
		rounds: ($vals | length), median: ($m | r3), min: ($vals | min | r3), max: ($vals | max | r3),
		host_limit: ($limit | r3),
		verdict: (if $m == null then "n/a"
			elif ($g.op == ">=" and $m >= $g.target) or ($g.op == "<=" and $m <= $g.target) then "met"
			else "missed" end)
	}]
