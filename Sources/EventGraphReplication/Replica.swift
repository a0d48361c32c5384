import EventGraph
import Foundation
import NATSClient

/// A read replica: a store kept up to date from a stream, message by message, each record
/// checked by its checksum and applied through the store's own commit pipeline with the
/// stream position in the same transaction — so a replica killed at any moment resumes
/// exactly where it stopped.
///
/// Its store serves every read as the primary's does; every local write is refused
/// (`StoreError.Code.replica`) until ``promote()`` makes it the primary.
///
/// ```swift
/// let replica = try Replica.create(at: "/srv/replica", jetStream: js, stream: "EG_…")
/// try replica.catchUp()
/// ```
public final class Replica: Sendable {
  /// Consecutive commit records of one version, applied in one transaction.
  struct CommitRun {
    var records: [CommitRecord] = []
    var version = 0
  }

  public let store: EventStore
  public let jetStream: JetStream
  public let stream: String
  let member: String
  /// The writers' key every message must be tagged by, when the stream has one.
  let key: StreamKey?

  /// Follows `stream` into `store`, which must be its replica.
  ///
  /// - Parameters:
  ///   - store: the replica's store.
  ///   - jetStream: the JetStream context the stream is read from.
  ///   - stream: the stream's name.
  ///   - key: the stream's writers' key (``StreamKey``), required when the stream has one:
  ///     every message is applied only once its tag verifies.
  /// - Throws: ``EventGraphModel/ErrorCode/streamKey`` when a key is missing or is not the
  ///   stream's.
  public init(store: EventStore, jetStream: JetStream, stream: String, key: StreamKey? = nil) throws {
    guard let role = try store.replicationRole(), role.stream == stream, role.kind == .replica else {
      let now =
        try store.replicationRole()?.description ?? "not replicated"
      throw ReplicationError.wrongRole(stream: stream, detail: "\(store.path) is \(now), not a replica of it")
    }
    self.store = store
    self.jetStream = jetStream
    self.stream = stream
    self.member = try Membership.member(of: store)
    self.key = key
    try Self.checkKey(key, jetStream: jetStream, stream: stream)
  }

  /// Checks `key` against the stream's genesis message (``StreamLayout/checkKey``).
  private static func checkKey(_ key: StreamKey?, jetStream: JetStream, stream: String) throws {
    guard let genesis = try jetStream.message(stream: stream, sequence: 1), genesis.kind == .genesis else {
      throw ReplicationError.badMessage(
        stream: stream, sequence: 1, detail: "the first message is not a genesis message")
    }
    try StreamLayout.checkKey(key, genesis: genesis, stream: stream)
  }

  /// Makes a new replica of `stream` in `path` (which must not hold a store) from its
  /// genesis message: the primary's identity and active model.
  ///
  /// - Parameters:
  ///   - path: the replica's directory, which must not hold a store.
  ///   - jetStream: the JetStream context the stream is read from.
  ///   - stream: the stream's name.
  ///   - options: the options the replica's store is opened with.
  ///   - key: the stream's writers' key, required when the stream has one.
  public static func create(
    at path: String, jetStream: JetStream, stream: String, options: StoreOptions = .init(), key: StreamKey? = nil
  ) throws -> Replica {
    guard StreamLayout.isValidStreamName(stream), try jetStream.streamInfo(stream) != nil else {
      throw ReplicationError.noStream(
        stream: stream, detail: "there is no such stream on \(jetStream.connection.urls.joined(separator: ","))")
    }
    guard let genesis = try jetStream.message(stream: stream, sequence: 1), genesis.kind == .genesis,
      let owner = genesis.headers[StreamLayout.Header.store]
    else {
      throw ReplicationError.badMessage(
        stream: stream, sequence: 1, detail: "the first message is not a genesis message")
    }
    try StreamLayout.checkKey(key, genesis: genesis, stream: stream)
    let model: Model
    do {
      model = try Model(json: genesis.data, file: "stream '\(stream)' message 1")
    } catch {
      throw ReplicationError.badMessage(stream: stream, sequence: 1, detail: "its model: \(error)")
    }
    // Made beside `path` and renamed into place once it is a replica, so that a creation
    // killed midway leaves no store without its role (a later run starts again).
    let fm = FileManager.default
    try EventStore.checkCreatable(at: path)
    let staging = path + ".replica-in-progress"
    try? fm.removeItem(atPath: staging)
    do {
      let store = try EventStore.create(at: staging, model: model, options: options, storeID: owner)
      try store.setReplicationRole(ReplicationRole(.replica, stream: stream), checkpoint: Membership.position(1))
    }
    try? fm.removeItem(atPath: path)
    try fm.moveItem(atPath: staging, toPath: path)
    return try Replica(
      store: try EventStore(path: path, options: options), jetStream: jetStream, stream: stream, key: key)
  }

  /// The last stream sequence applied.
  public func position() throws -> UInt64 { try Membership.position(of: store) }

  /// Applies every message up to the stream's end as it is now.
  ///
  /// - Returns: the messages applied.
  @discardableResult
  public func catchUp() throws -> Int {
    guard let end = try jetStream.streamInfo(stream)?.lastSequence else {
      throw ReplicationError.noStream(stream: stream, detail: "the stream is gone")
    }
    var applied = 0
    while try position() < end {
      let n = try applyNext(upTo: end)
      if n == 0 { break }
      applied += n
    }
    return applied
  }

  /// Keeps applying messages as they arrive until `shouldStop` says so (checked between
  /// messages, and every `poll` seconds while the stream has nothing new).
  ///
  /// A stream without a leader for a while (a node died) or a connection that is
  /// reconnecting only delays it: it tries again until the stream answers.
  public func follow(poll: Double = 0.01, until shouldStop: () -> Bool) throws {
    while !shouldStop() {
      let applied: Int
      do {
        applied = try applyNext(upTo: .max)
      } catch let e as NATSError where e.isTransient {
        applied = 0
      }
      if applied == 0 { Thread.sleep(forTimeInterval: poll) }
    }
  }

  /// Reads up to 64 messages after the position (none past `end`) and applies them, runs
  /// of commits of one version in one transaction; the count applied.
  func applyNext(upTo end: UInt64) throws -> Int {
    var next = try position() + 1
    var run = CommitRun()
    var applied = 0
    while applied < 64, next <= end {
      guard let message = try jetStream.message(stream: stream, sequence: next) else {
        // Missing, or published just after it was asked for: asked again once the stream
        // says it holds it.
        if let last = try jetStream.streamInfo(stream)?.lastSequence, last >= next,
          try jetStream.message(stream: stream, sequence: next) == nil
        {
          // Purged before a base (StreamLayout): go on at the next message there is.
          if let after = try purgedUntil(next) {
            next = after
            continue
          }
          throw ReplicationError.badMessage(
            stream: stream, sequence: next, detail: "the message is missing: the stream has a gap")
        }
        break
      }
      if let key, !key.verifies(message) {
        // What came before it is the writers': applied, and the forgery refused.
        try append(&run, through: next - 1)
        throw ReplicationError.unauthenticated(stream: stream, message)
      }
      if message.kind == .commits, let version = message.version, run.records.isEmpty || version == run.version {
        run.records += try StreamLayout.unpack(message.data, sequence: next, stream: stream)
        run.version = version
      } else {
        try append(&run, through: next - 1)
        try apply(message)
      }
      applied += 1
      next += 1
    }
    try append(&run, through: next - 1)
    return applied
  }

  /// The sequence of the next message the stream holds after the missing `sequence`, when
  /// the gap is a purge's; `nil` when it is not.
  ///
  /// A gap is a purge's when a base message lies at or after the next message (a stream is
  /// purged only before a base).
  private func purgedUntil(_ sequence: UInt64) throws -> UInt64? {
    guard
      let found = try jetStream.nextMessage(stream: stream, from: sequence, subject: StreamLayout.subjects(stream)[0]),
      let base = try jetStream.nextMessage(stream: stream, from: sequence, subject: StreamLayout.bases(stream)),
      base.sequence >= found.sequence
    else { return nil }
    return found.sequence
  }

  /// Appends a run of commit records of one version, with the position `sequence`.
  ///
  /// The records the log holds already — the commits after a base's cut, which follow the
  /// base again in the stream — are left out once they are found to be the same bytes.
  private func append(_ run: inout CommitRun, through sequence: UInt64) throws {
    guard !run.records.isEmpty else { return }
    do {
      let held = try store.commitRecords(
        from: run.records[0].number, version: run.version, maxCommits: run.records.count, maxBytes: .max)
      for (mine, theirs) in zip(held, run.records) where mine.bytes != theirs.bytes {
        throw ReplicationError.diverged(
          stream: stream,
          detail:
            "message \(sequence) holds commit \(theirs.number) of version \(run.version), which differs from this replica's"
        )
      }
      run.records.removeFirst(min(held.count, run.records.count))
      guard !run.records.isEmpty else {
        try store.setCheckpoint(Membership.position(sequence))
        return
      }
      try store.appendCommitRecords(run.records, version: run.version, checkpoint: Membership.position(sequence))
    } catch {
      throw ReplicationError.badMessage(stream: stream, sequence: sequence, detail: "\(error)")
    }
    run.records = []
  }

  /// Applies a message other than a run of commits, with the position.
  private func apply(_ m: StoredMessage) throws {
    let at = Membership.position(m.sequence)
    guard m.headers[StreamLayout.Header.store] == store.storeID else {
      throw ReplicationError.otherStore(
        stream: stream, found: m.headers[StreamLayout.Header.store] ?? "?", expected: store.storeID)
    }
    switch m.kind {
    case .genesis, .promote:
      try store.setCheckpoint(at)
    case .model:
      guard let version = m.version else { throw badHeader(m) }
      if try store.versions().contains(version) {
        try store.setCheckpoint(at)
      } else {
        let model = try Model(json: m.data, file: "stream '\(stream)' message \(m.sequence)")
        try store.installVersion(model, checkpoint: at)
      }
    case .switchVersion:
      guard let version = m.version else { throw badHeader(m) }
      try store.switchVersion(to: version, checkpoint: at)
    case .commits:
      guard let version = m.version else { throw badHeader(m) }
      var run = CommitRun(
        records: try StreamLayout.unpack(m.data, sequence: m.sequence, stream: stream), version: version)
      try append(&run, through: m.sequence)
    case .base:
      guard let version = m.version else { throw badHeader(m) }
      do {
        try store.applyBase(try CommitRecord(bytes: m.data), version: version, checkpoint: at)
      } catch {
        throw ReplicationError.badMessage(stream: stream, sequence: m.sequence, detail: "its base: \(error)")
      }
    case .none:
      throw ReplicationError.badMessage(
        stream: stream, sequence: m.sequence, detail: "unknown kind '\(m.headers[StreamLayout.Header.kind] ?? "")'")
    }
  }

  private func badHeader(_ m: StoredMessage) -> ReplicationError {
    .badMessage(
      stream: stream, sequence: m.sequence, detail: "a \(m.kind?.rawValue ?? "?") message without its version")
  }

  // MARK: - Failover

  /// Follows the stream as a candidate for primary: while a primary holds the stream's
  /// lease, it applies messages as ``follow(poll:until:)`` does; once the lease lapses, it
  /// applies the whole stream, races the other candidates for the lease with a
  /// compare-and-set, and the winner promotes itself (``promote()``, fenced by the stream's
  /// last sequence) and starts shipping as the new primary, holding the lease.
  ///
  /// The losers keep following, now the new primary's messages. A candidate that won the
  /// lease but whose promotion is fenced — the former primary published meanwhile — gives
  /// the lease back and goes on following.
  ///
  /// - Parameters:
  ///   - lease: the lease's time to live (the primary's must be the same) and this member's
  ///     address, published in the lease once it is the primary.
  ///   - mode: the new primary's shipping mode.
  ///   - poll: how long to wait when the stream has nothing new, in seconds.
  ///   - shouldStop: checked between messages.
  /// - Returns: the new primary's shipper, started; `nil` when `shouldStop` said so first.
  public func runAsCandidate(
    lease: LeaseOptions = .init(), mode: Shipper.Mode = .local, poll: Double = 0.01, until shouldStop: () -> Bool
  ) throws -> Shipper? {
    let kv = try PrimaryLease.open(jetStream, stream: stream, ttl: lease.ttl)
    let mine = LeaseHolder(member: member, store: store.storeID, address: lease.address)
    // The lease is read a few times per time to live: a lapse is seen within a fraction
    // of it, without a request per message.
    let every = min(max(poll, lease.ttl / 20), 0.25)
    var lastLook = Date.distantPast
    while !shouldStop() {
      var applied = 0
      do {
        applied = try applyNext(upTo: .max)
      } catch let e as NATSError where e.isTransient {
        applied = 0
      }
      if Date().timeIntervalSince(lastLook) >= every {
        lastLook = Date()
        do {
          if try kv.get(PrimaryLease.key) == nil, let shipper = try stand(kv, mine, lease: lease, mode: mode) {
            return shipper
          }
        } catch is NATSError {
          // The bucket without a leader for a moment, a lost answer: looked at again next
          // time. A lease taken but not followed by a promotion lapses by itself.
        }
      }
      if applied == 0 { Thread.sleep(forTimeInterval: poll) }
    }
    return nil
  }

  /// Races for the lapsed lease; the started shipper when this member won and promoted
  /// itself, `nil` when another member won or the promotion was fenced.
  private func stand(_ kv: KeyValue, _ mine: LeaseHolder, lease: LeaseOptions, mode: Shipper.Mode) throws
    -> Shipper?
  {
    try catchUp()
    guard let revision = try kv.create(PrimaryLease.key, PrimaryLease.encode(mine)) else { return nil }
    do {
      try promote()
    } catch let e as ReplicationError where e.code == .fenced {
      // The former primary published after all: it lives. Give the lease back to it.
      if try kv.get(PrimaryLease.key)?.revision == revision { try kv.delete(PrimaryLease.key) }
      return nil
    }
    let shipper = try Shipper(store: store, jetStream: jetStream, stream: stream, mode: mode, key: key, lease: lease)
    shipper.start()
    return shipper
  }

  /// Makes this replica the primary: it applies everything the stream holds, then
  /// publishes a promote message fenced by the stream's last sequence — so a former
  /// primary's next publish is refused — and takes the primary's role.
  ///
  /// - Throws: ``EventGraphModel/ErrorCode/fenced`` when another member published meanwhile
  ///   (run it again to catch up with that one).
  public func promote() throws {
    try catchUp()
    let at = try position()
    let message = StreamLayout.message(
      .promote, subject: StreamLayout.promote(stream), id: "promote:\(at + 1)", store: store.storeID, member: member,
      key: key)
    let outcome = Result { () throws(NATSError) -> PublishAck in try jetStream.publish(message, expectLastSequence: at)
    }
    if case .failure(let e) = outcome, e.isWrongLastSequence {
      throw ReplicationError.fenced(
        stream: stream, sequence: at + 1, detail: "another member published after sequence \(at) while promoting")
    }
    let ack = try outcome.get()
    try store.setReplicationRole(
      ReplicationRole(.primary, stream: stream), checkpoint: Membership.position(ack.sequence))
  }
}
