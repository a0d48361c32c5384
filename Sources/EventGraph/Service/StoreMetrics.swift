import Foundation

/// A snapshot of what a store is doing, for a service's monitoring: ``EventStore/metrics()``.
///
/// Two kinds of figure. The *process's own* — the commit writer's histograms and counters —
/// count the write transactions this process's handle committed since it opened the store
/// (another process writing the same store counts its own). The *store's* — the log's end,
/// the map, the readers, the consumers' lag — are read from the store and are the same
/// from every process.
///
/// ``prometheusText(includingProcess:)`` renders it in Prometheus' text exposition format, for a service
/// to serve on its HTTP endpoint (or `eventtool stats STORE --prometheus` for node
/// exporter's textfile collector); rates (commits a second) are Prometheus' to compute
/// from the counters, as `rate(eventgraph_commits_total[1m])`.
public struct StoreMetrics: Sendable {
  /// A histogram as Prometheus reads one: cumulative counts per upper bound.
  public struct Histogram: Sendable, Hashable {
    /// The buckets' upper bounds, ascending (`le`); the last bucket, `+Inf`, is ``count``.
    public let upperBounds: [Double]
    /// How many observations were at most each bound.
    public let cumulativeCounts: [UInt64]
    /// How many observations there were.
    public let count: UInt64
    /// Their sum.
    public let sum: Double
  }

  /// The duration of each write transaction of commits, from its start to its commit
  /// (seconds); group commit puts several callers' commits in one.
  public let transactionDuration: Histogram
  /// The part of it that LMDB's commit took: writing the pages and, for a durable store,
  /// flushing them to the disk (seconds).
  public let lmdbCommitDuration: Histogram
  /// How many commits each write transaction held.
  public let commitsPerTransaction: Histogram
  /// The commits this process appended.
  public let commitsAppended: UInt64
  /// The events of those commits.
  public let eventsAppended: UInt64
  /// The log's last commit number and its last event's sequence (every process's commits).
  public let logCommits: UInt64
  /// The log's last event's sequence.
  public let logEvents: UInt64
  /// The map's size, the bytes in use in it, and the file's size.
  public let mapSize: Int
  /// The bytes of the map in use (pages up to the last one written).
  public let usedSize: Int
  /// The data file's size on the disk.
  public let fileSize: Int
  /// LMDB's reader slots in use (every process's), and how many there are.
  public let readers: Int
  /// How many reader slots the store has.
  public let maxReaders: Int
  /// Each durable consumer's and projection's lag: events of the log after its position
  /// (a consumer is known to the store from its first acknowledgement).
  public let consumerLag: [(name: String, events: UInt64)]
  /// Each consumer group's lag (events after its partition furthest behind), parked
  /// commits and members alive.
  public let groups: [(name: String, lag: UInt64, parked: Int, members: Int)]
  /// Each unfinished upcast building a version from this log (a following one, or one
  /// stopped before its switch): the version, and the events of the log it has not done.
  public let upcastLag: [(version: Int, events: UInt64)]

  /// The metrics in Prometheus' text exposition format (version 0.0.4): each family with
  /// its `# HELP` and `# TYPE`, names after Prometheus' conventions
  /// (`eventgraph_commit_transaction_duration_seconds_bucket`, `eventgraph_commits_total`).
  ///
  /// - Parameter includingProcess: whether to write this process's own histograms and
  ///   counters too; a program that only looks at a store (`eventtool stats`) leaves them
  ///   out, as it made no commits to count.
  public func prometheusText(includingProcess: Bool = true) -> String {
    var out = PrometheusExposition()
    if includingProcess {
      out.histogram(
        "eventgraph_commit_transaction_duration_seconds",
        help: "Duration of this process's write transactions of commits, from start to commit.", transactionDuration)
      out.histogram(
        "eventgraph_lmdb_commit_duration_seconds",
        help: "Duration of LMDB's commit of those transactions: page writes and, when durable, the flush.",
        lmdbCommitDuration)
      out.histogram(
        "eventgraph_commits_per_transaction",
        help: "Commits in each of this process's write transactions (group commit).", commitsPerTransaction)
      out.counter("eventgraph_commits_total", help: "Commits this process appended to the log.", commitsAppended)
      out.counter("eventgraph_events_total", help: "Events of the commits this process appended.", eventsAppended)
    }
    out.gauge(
      "eventgraph_log_commits", help: "The log's last commit number, every process's commits.", Double(logCommits))
    out.gauge("eventgraph_log_events", help: "The log's last event sequence.", Double(logEvents))
    out.gauge("eventgraph_map_size_bytes", help: "The size of the store's memory map.", Double(mapSize))
    out.gauge("eventgraph_map_used_bytes", help: "The bytes of the map in use.", Double(usedSize))
    out.gauge("eventgraph_file_size_bytes", help: "The size of the store's data file.", Double(fileSize))
    out.gauge("eventgraph_readers", help: "LMDB reader slots in use, every process's.", Double(readers))
    out.gauge("eventgraph_readers_max", help: "LMDB reader slots of the store.", Double(maxReaders))
    out.gauge(
      "eventgraph_consumer_lag_events", help: "Events of the log after a durable consumer's position.",
      consumerLag.map { ([("consumer", $0.name)], Double($0.events)) })
    out.gauge(
      "eventgraph_group_lag_events", help: "Events of the log after a consumer group's partition furthest behind.",
      groups.map { ([("group", $0.name)], Double($0.lag)) })
    out.gauge(
      "eventgraph_group_parked_commits", help: "Commits a consumer group parked after their attempts failed.",
      groups.map { ([("group", $0.name)], Double($0.parked)) })
    out.gauge(
      "eventgraph_group_members", help: "Members of a consumer group whose heartbeat holds.",
      groups.map { ([("group", $0.name)], Double($0.members)) })
    out.gauge(
      "eventgraph_upcast_lag_events", help: "Events of the log an unfinished upcast building a version has not done.",
      upcastLag.map { ([("version", String($0.version))], Double($0.events)) })
    return out.text
  }
}

/// Whether a store is fit to serve: ``EventStore/health(maxConsumerLag:)``.
public struct StoreHealth: Sendable, Hashable {
  /// One thing looked at, and what was found.
  public struct Check: Sendable, Hashable {
    public init(name: String, isHealthy: Bool, detail: String) {
      self.name = name
      self.isHealthy = isHealthy
      self.detail = detail
    }

    /// What was looked at: `writer`, `consumer:NAME`, `projection:NAME`, `group:NAME`,
    /// `upcast:vN`.
    public let name: String
    /// Whether it is as it should be.
    public let isHealthy: Bool
    /// What was found, in words (the reason when not healthy).
    public let detail: String
  }

  /// Every check, the writer's first.
  public let checks: [Check]

  /// Whether every check is healthy.
  public var isHealthy: Bool { checks.allSatisfy(\.isHealthy) }

  /// The checks that are not healthy.
  public var problems: [Check] { checks.filter { !$0.isHealthy } }
}

extension EventStore {
  /// What the store is doing now: the commit writer's histograms and counters of this
  /// process, and the store's log end, map, readers and consumers' lag.
  ///
  /// A few reads of the store (its environment's information and one read transaction
  /// over the consumers' positions): cheap enough to serve on every scrape.
  public func metrics() throws -> StoreMetrics {
    let own = (commits.metrics ?? CommitMetrics()).read()
    let info = env.info
    let (end, positions, upcasts) = try read { s in
      (try s.logEnd(), try consumerPositions(), try Self.upcastCheckpoints(s.reader))
    }
    let file = (try? FileManager.default.attributesOfItem(atPath: path + "/data.mdb")[.size] as? Int) ?? 0
    return StoreMetrics(
      transactionDuration: own.transaction, lmdbCommitDuration: own.lmdbCommit, commitsPerTransaction: own.batch,
      commitsAppended: own.commits, eventsAppended: own.events, logCommits: end.commit, logEvents: end.sequence,
      mapSize: info.mapSize, usedSize: info.usedSize, fileSize: file, readers: info.readersUsed,
      maxReaders: info.maxReaders,
      consumerLag: positions.map { ($0.name, end.sequence > $0.position ? end.sequence - $0.position : 0) },
      groups: try consumerGroups().map { ($0.name, $0.lag, $0.parked.count, $0.members.count) },
      upcastLag: upcasts.map { ($0.version, end.sequence > $0.done ? end.sequence - $0.done : 0) })
  }

  /// The checkpoints of the upcasts building a newer version from this log: the last
  /// source sequence each has done (`meta`'s `upcast.vN.checkpoint`).
  static func upcastCheckpoints(_ reader: GraphReader<ReadHandle>) throws -> [(version: Int, done: UInt64)] {
    var found: [(version: Int, done: UInt64)] = []
    try reader.txn.forEach(reader.dbs.meta, from: Array("upcast.v".utf8)) { k, v in
      let name = String(decoding: k, as: UTF8.self)
      guard name.hasPrefix("upcast.v") else { return false }
      if name.hasSuffix(".checkpoint"), let version = Int(name.dropFirst(8).prefix { $0 != "." }),
        version > reader.model.version, let done = KeyField.u64(v, at: 0)
      {
        found.append((version, done))
      }
      return true
    }
    return found
  }

  /// Whether the store can take commits and its consumers keep up.
  ///
  /// - The writer: the store is open for writing and is not a replica or a fenced former
  ///   primary (whose writes are refused).
  /// - Each durable consumer and projection: at most `maxConsumerLag` events behind the
  ///   log's end.
  /// - Each consumer group: a member alive, at most `maxConsumerLag` events behind, and no
  ///   parked commit.
  /// - Each unfinished upcast building a version from this log: at most `maxConsumerLag`
  ///   events of the log not yet done.
  /// - What parts of the service outside the store added (``setHealthCheck(_:_:)``): a
  ///   replication shipper says whether it ships.
  public func health(maxConsumerLag: UInt64 = 10_000) throws -> StoreHealth {
    var checks: [StoreHealth.Check] = []
    let role = try replicationRole()
    if options.readOnly {
      checks.append(.init(name: "writer", isHealthy: false, detail: "the store is open read-only"))
    } else if let role, role.kind != .primary {
      checks.append(.init(name: "writer", isHealthy: false, detail: "the store is \(role): its writes are refused"))
    } else {
      checks.append(.init(name: "writer", isHealthy: true, detail: "open for writing"))
    }
    let now = try metrics()
    for g in now.groups {
      var wrong: [String] = []
      if g.members == 0 { wrong.append("no member is alive") }
      if g.lag > maxConsumerLag { wrong.append("\(g.lag) events behind the log's end (at most \(maxConsumerLag))") }
      if g.parked > 0 { wrong.append("\(g.parked) parked commit\(g.parked == 1 ? "" : "s")") }
      checks.append(
        .init(
          name: "group:" + g.name, isHealthy: wrong.isEmpty,
          detail: wrong.isEmpty ? "\(g.members) members, \(g.lag) events behind" : wrong.joined(separator: "; ")))
    }
    for u in now.upcastLag {
      let ok = u.events <= maxConsumerLag
      checks.append(
        .init(
          name: "upcast:v\(u.version)", isHealthy: ok,
          detail: ok
            ? "\(u.events) events behind" : "\(u.events) events of the log not yet upcast (at most \(maxConsumerLag))"))
    }
    for (name, lag) in now.consumerLag {
      let ok = lag <= maxConsumerLag
      checks.append(
        .init(
          name: name.hasPrefix("projection:") ? name : "consumer:" + name, isHealthy: ok,
          detail: ok ? "\(lag) events behind" : "\(lag) events behind the log's end (at most \(maxConsumerLag))"))
    }
    for (_, check) in healthChecks.withLock({ $0 }).sorted(by: { $0.key < $1.key }) { checks.append(check()) }
    return StoreHealth(checks: checks)
  }

  /// Adds (or with `nil` removes) a check of a part of the service outside the store to
  /// ``health(maxConsumerLag:)``, under `name`: a replication shipper adds its own while
  /// it runs.
  public func setHealthCheck(_ name: String, _ check: (@Sendable () -> StoreHealth.Check)?) {
    healthChecks.withLock { $0[name] = check }
  }
}
