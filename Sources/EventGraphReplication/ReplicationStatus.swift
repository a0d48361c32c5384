import EventGraph
import NATSClient

/// How far a store is from its stream: for `eventtool stats --nats`, and for monitoring.
public struct ReplicationStatus: Sendable, Hashable {
  public let role: ReplicationRole
  /// The stream's last message.
  public let streamLastSequence: UInt64
  /// A replica's place in the stream: the last message it applied.
  public let appliedSequence: UInt64?
  /// A primary's commits of its active version that the stream does not hold yet.
  public let unshippedCommits: UInt64?
  /// Who holds the stream's lease (``LeaseHolder``): the primary services write to; `nil`
  /// when no one does.
  public let leaseHolder: LeaseHolder?

  /// A replica's lag in messages (0 when caught up); `nil` for a primary.
  public var messagesBehind: UInt64? { appliedSequence.map { streamLastSequence - min($0, streamLastSequence) } }

  /// The last stream sequence a replica applied, as its checkpoint holds it; `nil` for a
  /// store that never applied one (no stream needed).
  public static func appliedSequence(of store: EventStore) throws -> UInt64? {
    try store.checkpoint(named: Membership.positionCheckpoint) == nil ? nil : Membership.position(of: store)
  }

  /// Reads `store`'s role and asks the stream where it stands; `nil` for a store that is
  /// not replicated.
  public static func read(_ store: EventStore, jetStream: JetStream) throws -> ReplicationStatus? {
    guard let role = try store.replicationRole() else { return nil }
    guard let info = try jetStream.streamInfo(role.stream) else {
      throw ReplicationError.noStream(stream: role.stream, detail: "there is no such stream on the servers given")
    }
    let holder = try leaseHolder(jetStream: jetStream, stream: role.stream)
    switch role.kind {
    case .replica:
      return ReplicationStatus(
        role: role, streamLastSequence: info.lastSequence, appliedSequence: try Membership.position(of: store),
        unshippedCommits: nil, leaseHolder: holder)
    case .primary, .fenced:
      let version = try store.activeVersion()
      let shipped = try shippedCommits(
        jetStream: jetStream, stream: role.stream, version: version, member: try Membership.knownMember(of: store),
        last: info.lastSequence)
      let end = try store.read { try $0.logEnd().commit }
      return ReplicationStatus(
        role: role, streamLastSequence: info.lastSequence, appliedSequence: nil,
        unshippedCommits: end - min(end, shipped), leaseHolder: holder)
    }
  }

  /// The last commit of `version` that the stream holds for the member `member` of the
  /// store: the commits of the stream up to that member's last message.
  ///
  /// Not simply the stream's last commit number: after another member took over, the stream
  /// may hold as many commits as this store while their later ones are another history, and
  /// a store that diverged so must not read as caught up. Everything in the stream up to a
  /// member's own last message is in that member's log (it publishes only when it holds the
  /// stream's end); what others published after it is not. Walks back from the end, which
  /// is the member's own message in the usual case.
  static func shippedCommits(jetStream: JetStream, stream: String, version: Int, member: String?, last: UInt64)
    throws -> UInt64
  {
    guard let member else {
      return try jetStream.lastMessage(stream: stream, subject: StreamLayout.commits(stream, version: version))?
        .lastCommit ?? 0
    }
    var ownSeen = false
    var sequence = last
    while sequence > 0 {
      if let m = try jetStream.message(stream: stream, sequence: sequence) {
        if m.member == member { ownSeen = true }
        if ownSeen, m.kind == .commits, m.version == version { return m.lastCommit ?? 0 }
      }
      sequence -= 1
    }
    return 0
  }
}

extension ReplicationStatus {
  /// The status as Prometheus families (`PrometheusExposition`), to serve beside the
  /// store's `StoreMetrics.prometheusText(includingProcess:)`: the store's role,
  /// the stream's end, a replica's lag in messages, a primary's unshipped commits, and
  /// whether anyone holds the stream's lease.
  public func prometheusText() -> String {
    var out = PrometheusExposition()
    out.gauge(
      "eventgraph_replication_role", help: "The store's part in replication: 1 for its role.",
      [([("role", role.kind.rawValue), ("stream", role.stream)], 1)])
    out.gauge(
      "eventgraph_replication_stream_last_sequence", help: "The replication stream's last message.",
      Double(streamLastSequence))
    if let behind = messagesBehind {
      out.gauge(
        "eventgraph_replication_messages_behind", help: "Stream messages a replica has not applied.", Double(behind))
    }
    if let unshipped = unshippedCommits {
      out.gauge(
        "eventgraph_replication_unshipped_commits", help: "Commits of a primary that the stream does not hold.",
        Double(unshipped))
    }
    out.gauge(
      "eventgraph_replication_lease_held", help: "Whether a member holds the stream's lease (a primary to write to).",
      leaseHolder == nil ? 0 : 1)
    return out.text
  }
}

extension ShipperStatus {
  /// The shipper's state as Prometheus families: the stream's end as it knows it, the last
  /// commit shipped per model version, and whether it is fenced, retrying a failure, or has
  /// seen its lease taken.
  public func prometheusText() -> String {
    var out = PrometheusExposition()
    out.gauge(
      "eventgraph_shipper_stream_last_sequence", help: "The stream's last message as the shipper knows it.",
      [([("stream", stream)], Double(lastSequence))])
    out.gauge(
      "eventgraph_shipper_shipped_commit", help: "The last commit in the stream, per model version.",
      shipped.sorted { $0.key < $1.key }.map { ([("version", String($0.key))], Double($0.value)) })
    out.gauge("eventgraph_shipper_fenced", help: "Whether another member fenced this primary.", fenced == nil ? 0 : 1)
    out.gauge(
      "eventgraph_shipper_retrying", help: "Whether the shipper is retrying a failure (no leader, a timeout).",
      lastError == nil ? 0 : 1)
    out.gauge(
      "eventgraph_shipper_lease_lost", help: "Whether another member took the stream's lease from this primary.",
      leaseLostTo == nil ? 0 : 1)
    return out.text
  }
}
