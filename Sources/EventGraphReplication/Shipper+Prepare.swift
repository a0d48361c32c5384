import EventGraph
import Foundation
import NATSClient

extension Shipper {
  /// Finds where the stream ends and what of the log it holds, creating the stream (and
  /// its genesis message) for a store that has none; makes the store the stream's primary.
  ///
  /// - Throws: ``ReplicationError`` when the stream belongs to another store, when another
  ///   member published last (this store was fenced), or when the store is a replica.
  func prepare(replicas: Int) throws {
    switch try store.replicationRole() {
    case .some(let role) where role.stream != stream:
      throw ReplicationError.wrongRole(
        stream: stream, detail: "the store is \(role.description)")
    case .some(let role) where role.kind == .replica:
      var e = ReplicationError.wrongRole(stream: stream, detail: "the store is a read replica")
      e.remedy = .promote(path: store.path)
      throw e
    case .some(let role) where role.kind == .fenced:
      throw ReplicationError.fenced(stream: stream, sequence: nil, detail: role.detail)
    case .some, .none: break
    }
    let wasPrimary = try store.replicationRole()?.kind == .primary
    let info = try jetStream.addStream(
      name: stream, subjects: StreamLayout.subjects(stream), replicas: replicas, duplicateWindow: 600)
    // Replicas that meet a purged range find the next message by a direct get; a stream
    // made before purges were shipped is given them.
    try jetStream.allowDirectGets(stream)
    if info.lastSequence == 0 {
      let active = try store.activeVersion()
      var headers = [StreamLayout.Header.version: String(active)]
      if let key { headers[StreamLayout.Header.key] = key.fingerprint }
      try publish(
        kind: .genesis, subject: StreamLayout.genesis(stream), id: "genesis", headers: headers,
        data: Array(try store.model(version: active).jsonText.utf8), expectNoMessage: true)
    } else {
      try readStream(lastSequence: info.lastSequence, wasPrimary: wasPrimary)
    }
    if !wasPrimary { try store.setReplicationRole(ReplicationRole(.primary, stream: stream)) }
  }

  private func readStream(lastSequence: UInt64, wasPrimary: Bool) throws {
    guard let genesis = try jetStream.lastMessage(stream: stream, subject: StreamLayout.genesis(stream)) else {
      throw ReplicationError.noStream(stream: stream, detail: "the stream has messages but no genesis message")
    }
    let owner = genesis.headers[StreamLayout.Header.store] ?? ""
    guard owner == store.storeID else {
      throw ReplicationError.otherStore(stream: stream, found: owner, expected: store.storeID)
    }
    try StreamLayout.checkKey(key, genesis: genesis, stream: stream)
    guard let last = try jetStream.message(stream: stream, sequence: lastSequence) else {
      throw ReplicationError.badMessage(stream: stream, sequence: lastSequence, detail: "the last message is missing")
    }
    if let key, !key.verifies(last) { throw ReplicationError.unauthenticated(stream: stream, last) }
    if last.member != member {
      guard wasPrimary else {
        throw ReplicationError.wrongRole(
          stream: stream,
          detail: "another copy of the store (member \(last.member)) publishes to it: make this one a replica")
      }
      let detail = "member \(last.member) published at sequence \(lastSequence) after this store"
      try store.setReplicationRole(ReplicationRole(.fenced, stream: stream, detail: detail))
      throw ReplicationError.fenced(stream: stream, sequence: lastSequence, detail: detail)
    }
    var shipped: [Int: UInt64] = [:]
    var bases: [Int: UInt64] = [:]
    var announced: Set<Int> = []
    var purges: [(version: Int, before: UInt64)] = []
    for version in try store.versions() {
      if try jetStream.lastMessage(stream: stream, subject: StreamLayout.model(stream, version: version)) != nil {
        announced.insert(version)
      }
      let commits = try jetStream.lastMessage(stream: stream, subject: StreamLayout.commits(stream, version: version))
      shipped[version] = commits?.lastCommit ?? 0
      if let base = try jetStream.lastMessage(stream: stream, subject: StreamLayout.base(stream, version: version)),
        let number = base.lastCommit
      {
        bases[version] = number
        // A base published last: the commits after its cut are still to be published again.
        if base.sequence > commits?.sequence ?? 0 { shipped[version] = number }
        purges.append((version, base.sequence))
      }
    }
    let switched = try jetStream.lastMessage(stream: stream, subject: StreamLayout.switchVersion(stream))
    let active = switched?.version ?? genesis.version
    try checkLogs(against: shipped)
    setStreamState(lastSequence: lastSequence, shipped: shipped, bases: bases, announced: announced, active: active)
    // A shipper stopped between a base and its purge leaves the purge to this one.
    for p in purges { purge(version: p.version, before: p.before) }
  }

  /// The stream must not hold commits that the store does not: that store diverged.
  private func checkLogs(against shipped: [Int: UInt64]) throws {
    for (version, number) in shipped where number > 0 {
      // Commits the log's base stands for are not read one by one (they are gone).
      if let first = try store.commitRecords(from: 1, version: version, maxCommits: 1).first, first.isBase,
        first.number >= number
      {
        continue
      }
      guard try !store.commitRecords(from: number, version: version, maxCommits: 1).isEmpty else {
        throw ReplicationError.diverged(
          stream: stream,
          detail:
            "the stream holds commit \(number) of version \(version), which this store does not: it is not the store that wrote the stream"
        )
      }
    }
  }
}
