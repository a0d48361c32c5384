import EventGraph
import EventGraphReplication
internal import EventGraphText

struct StatsCommand: ToolCommand {
  let spec = CommandSpec(
    name: "stats",
    abstract:
      "Print counts: commits, events, objects per entity, database sizes, the file, the bytes in use and the free pages; the model versions with their content hashes; the replication role.",
    positionals: [PositionalSpec("STORE", help: "The store directory.")],
    options: [
      OptionSpec("json", help: "Print the figures as JSON."),
      OptionSpec(
        "prometheus",
        help:
          "Print the store's metrics in Prometheus' text format (for node_exporter's textfile collector): the log's end, the map, the readers, each consumer's lag, and with --nats the replication lag."
      ),
      OptionSpec(
        "nats", valueName: "URLS",
        help:
          "Ask the replication stream how far behind the store is (a replica's messages, a primary's unshipped commits)."
      ),
    ] + ReplicationOptions.security,
    examples: [
      "eventtool stats book.store", "eventtool stats book.store --json",
      "eventtool stats book.store --prometheus > /var/lib/node_exporter/book.prom",
    ])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let store = try openStore(try a.required("STORE"))
    let st = try store.statistics()
    let role = try store.replicationRole()
    let position = try ReplicationStatus.appliedSequence(of: store).map(String.init)
    let lag =
      try a.value("nats") == nil
      ? nil : ReplicationStatus.read(store, jetStream: try ReplicationOptions.connect(a, name: "eventtool stats"))
    if a.flag("prometheus") {
      guard !a.flag("json") else { throw ToolError.usage("--prometheus and --json are two formats: give one") }
      var text = try store.metrics().prometheusText(includingProcess: false)
      if let lag { text += lag.prometheusText() }
      return io.writeOut(text)
    }
    if a.flag("json") {
      io.print(
        JSON.object([
          JSONField("store", .string(st.path)), JSONField("storeID", .string(st.storeID)),
          JSONField("model", .string(st.modelName)), JSONField("version", .int(Int64(st.modelVersion))),
          JSONField(
            "models",
            .array(
              st.models.map {
                .object([
                  JSONField("version", .int(Int64($0.version))), JSONField("name", .string($0.name)),
                  JSONField("sha256", .string($0.hash)),
                ])
              })),
          JSONField("commits", .int(Int64(st.commits))), JSONField("events", .int(Int64(st.events))),
          JSONField("objects", .object(st.objectsPerEntity.map { JSONField($0.entity, .int(Int64($0.count))) })),
          JSONField(
            "databases",
            .object(
              st.databases.map {
                JSONField(
                  $0.name,
                  .object([JSONField("entries", .int(Int64($0.entries))), JSONField("pages", .int(Int64($0.pages)))]))
              })),
          JSONField("mapSize", .int(Int64(st.mapSize))), JSONField("fileSize", .int(Int64(st.fileSize))),
          JSONField("usedSize", .int(Int64(st.usedSize))), JSONField("freePages", .int(Int64(st.freePages))),
          JSONField("pageSize", .int(Int64(st.pageSize))),
          JSONField("openToOthers", .array(st.openToOthers.map { .string($0) })),
          JSONField("retention", RetentionCommand.json(st.retention)),
          JSONField(
            "base",
            st.base.map { b in
              .object([
                JSONField("commit", .int(Int64(b.commit))), JSONField("lastSequence", .int(Int64(b.lastSequence))),
                JSONField("truncatedAt", .string(ISO8601.format(b.truncatedAt))),
              ])
            } ?? .null),
          JSONField("history", .object(st.historyPerEntity.map { JSONField($0.entity, .int(Int64($0.entries))) })),
          JSONField(
            "replication",
            role.map { r in
              .object([
                JSONField("role", .string(r.kind.rawValue)), JSONField("stream", .string(r.stream)),
                JSONField("streamSequence", position.flatMap { Int64($0) }.map { .int($0) } ?? .null),
                JSONField("fencedBecause", r.kind == .fenced ? .string(r.detail) : .null),
                JSONField("streamLastSequence", lag.map { .int(Int64($0.streamLastSequence)) } ?? .null),
                JSONField("messagesBehind", lag?.messagesBehind.map { .int(Int64($0)) } ?? .null),
                JSONField("unshippedCommits", lag?.unshippedCommits.map { .int(Int64($0)) } ?? .null),
                JSONField(
                  "leaseHolder",
                  lag?.leaseHolder.map { h in
                    .object([
                      JSONField("member", .string(h.member)),
                      JSONField("address", h.address.map { .string($0) } ?? .null),
                    ])
                  } ?? .null),
              ])
            } ?? .null),
        ]).serialized())
      return
    }
    io.print("store    \(st.path) (\(st.storeID))")
    io.print("model    \(st.modelName) v\(st.modelVersion)")
    for m in st.models {
      io.print("version  v\(m.version) \(m.name) sha256 \(m.hash)\(m.version == st.modelVersion ? " (active)" : "")")
    }
    io.print("log      \(st.commits) commits, \(st.events) events")
    for (e, n) in st.objectsPerEntity { io.print("objects  \(e): \(n)") }
    for (e, n) in st.historyPerEntity { io.print("history  \(e): \(n) entries") }
    io.print("retain   \(RetentionCommand.describe(st.retention))")
    if let b = st.base {
      io.print(
        "base     commit \(b.commit), holding the graph as of sequence \(b.lastSequence) (history before it truncated on \(ISO8601.format(b.truncatedAt)))"
      )
    }
    for (name, entries, pages) in st.databases { io.print("db       \(name): \(entries) entries, \(pages) pages") }
    io.print("file     \(st.fileSize) bytes (\(st.usedSize) in use, map \(st.mapSize) bytes)")
    io.print(
      "free     \(st.freePages) pages (\(st.freePages * st.pageSize) bytes) on the free list, reused by later writes; 'eventtool compact' gives them back"
    )
    for w in st.openToOthers { io.print("access   \(w)") }
    if let role {
      let at = role.kind == .replica ? ", applied through stream sequence \(position ?? "0")" : ""
      let why = role.kind == .fenced ? " (\(role.detail))" : ""
      io.print("role     \(role.kind.rawValue) of stream \(role.stream)\(at)\(why)")
      if let lag {
        io.print("lag      \(Self.lagText(lag))")
        io.print("primary  \(Self.leaseText(lag))")
      }
    }
  }

  /// How far behind a replicated store is, in words: `3 message(s) behind; the stream ends…`.
  static func lagText(_ lag: ReplicationStatus) -> String {
    let behind =
      lag.messagesBehind.map { "\($0) message(s) behind" } ?? "\(lag.unshippedCommits ?? 0) commit(s) not yet shipped"
    return "\(behind); the stream ends at sequence \(lag.streamLastSequence)"
  }

  /// Who holds the stream's lease, in words.
  static func leaseText(_ lag: ReplicationStatus) -> String {
    let holder = lag.leaseHolder.map { "member \($0.member)" + ($0.address.map { " at \($0)" } ?? "") }
    return holder.map { "\($0) holds the stream's lease" } ?? "no member holds the stream's lease"
  }
}
