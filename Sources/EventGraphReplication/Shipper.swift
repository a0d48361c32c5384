import EventGraph
import EventGraphLocking
import Foundation
import NATSClient

/// Ships a store's log to its JetStream stream and, in quorum mode, holds each commit's
/// acknowledgement until the stream has stored it.
///
/// One thread of its own follows the log (nats.c's calls block): it publishes every commit
/// record not yet in the stream, a message per run of consecutive commits (at most
/// ``maxMessageBytes``), each fenced by the stream's last sequence. A shipper that starts
/// again — after a kill, or after a publish whose answer was lost — reads where the stream
/// ends and goes on from there, never duplicating or reordering a commit.
///
/// ```swift
/// let shipper = try Shipper(store: store, jetStream: js, mode: .quorum)
/// try shipper.start()
/// try await store.commit { tx in … }   // returns once the stream holds it
/// ```
public final class Shipper: CommitAcknowledging, Sendable {
  /// When a commit is acknowledged to its caller.
  public enum Mode: Sendable, Hashable {
    /// On the local fsync; the shipper follows and reports its lag.
    case local
    /// Once a majority of the stream's servers stored it (the service's `commit` waits).
    case quorum
  }

  public let store: EventStore
  public let jetStream: JetStream
  public let stream: String
  public let mode: Mode
  /// The largest message published, in bytes (a single larger commit goes alone).
  public let maxMessageBytes: Int
  let member: String
  /// The writers' key that tags every message, when the stream has one.
  let key: StreamKey?
  /// Holds the stream's lease while the shipper runs, when it was asked to (set once, after
  /// the stream was found to be this store's).
  private let leaseKeeper = Locked<LeaseKeeper?>(nil)
  private var lease: LeaseKeeper? { leaseKeeper.withLock { $0 } }
  private let state = Locked(ShipperState())
  private let wake = DispatchSemaphore(value: 0)
  private let finished = DispatchSemaphore(value: 0)

  /// - Parameters:
  ///   - store: the primary's store, whose commits are shipped.
  ///   - jetStream: the JetStream context the stream is published to.
  ///   - stream: the stream's name; by default `EG_` and the store's identity.
  ///   - mode: when a commit counts as shipped (``Mode-swift.enum``).
  ///   - replicas: the stream's replication factor, when the shipper creates it.
  ///   - key: the writers' key (``StreamKey``) that tags every message: given to the stream
  ///     when the shipper creates it, and required when the stream has one.
  ///   - lease: hold the stream's lease (``LeaseOptions``), renewed until ``stop()``, so
  ///     that candidates (``Replica/runAsCandidate(lease:mode:poll:until:)``) take over only
  ///     once this primary stops renewing it. Without it, candidates see no primary.
  /// - Throws: ``EventGraphModel/ErrorCode/leaseHeld`` when another member holds the lease.
  public init(
    store: EventStore, jetStream: JetStream, stream: String? = nil, mode: Mode = .local, replicas: Int = 3,
    key: StreamKey? = nil, lease: LeaseOptions? = nil
  ) throws {
    let name = stream ?? StreamLayout.defaultStream(storeID: store.storeID)
    guard StreamLayout.isValidStreamName(name) else {
      throw ReplicationError.wrongRole(stream: name, detail: "a stream's name is 1 to 64 letters, digits, '_' or '-'")
    }
    self.store = store
    self.jetStream = jetStream
    self.stream = name
    self.mode = mode
    self.maxMessageBytes = max(64 << 10, min(jetStream.connection.maxPayload - (8 << 10), 4 << 20))
    self.member = try Membership.member(of: store)
    self.key = key
    try prepare(replicas: replicas)
    if let lease {
      let keeper = try LeaseKeeper(
        jetStream: jetStream, stream: name, member: member, store: store.storeID, options: lease)
      leaseKeeper.withLock { $0 = keeper }
    }
  }

  // MARK: - Running

  /// Starts the shipping thread (once; later calls do nothing); in quorum mode the store's
  /// service commits wait for it.
  public func start() {
    let first = state.withLock { s -> Bool in
      defer { s.started = true }
      return !s.started
    }
    guard first else { return }
    if mode == .quorum { store.setAcknowledger(self) }
    store.setHealthCheck(healthName) { [weak self] in
      self?.healthCheck() ?? StoreHealth.Check(name: "shipper", isHealthy: false, detail: "the shipper is gone")
    }
    let thread = Thread { [self] in
      run()
      finished.signal()
    }
    thread.name = "EventGraph shipper"
    thread.start()
  }

  /// Stops the thread after its current publish; waiting commits get
  /// ``EventGraphModel/ErrorCode/stopped``.
  public func stop() {
    let wasRunning = state.withLock { s -> Bool in
      defer { s.stopped = true }
      return s.started && !s.stopped
    }
    lease?.stop()
    guard wasRunning else { return }
    store.setHealthCheck(healthName, nil)
    if mode == .quorum { store.setAcknowledger(nil) }
    wake.signal()
    finished.wait()
    failWaiters(ReplicationError.stopped(stream: stream))
  }

  /// What the shipper has done: the stream's last sequence, the commits shipped per
  /// version, and the fence, if it was fenced.
  public var status: ShipperStatus {
    state.withLock { s in
      ShipperStatus(
        stream: stream, lastSequence: s.lastSequence, shipped: s.shipped, fenced: s.fenced, lastError: s.lastError,
        leaseLostTo: lease?.lostTo)
    }
  }

  private var healthName: String { "shipper:" + stream }

  /// Whether the shipper ships: not fenced, not retrying a failure; and how far behind.
  func healthCheck() -> StoreHealth.Check {
    let s = status
    if let fenced = s.fenced {
      return StoreHealth.Check(name: healthName, isHealthy: false, detail: "fenced: \(fenced)")
    }
    let version = store.model.version
    let last = (try? store.read { try $0.logEnd().commit }) ?? 0
    let behind = last - min(last, s.shipped[version] ?? 0)
    if let error = s.lastError {
      return StoreHealth.Check(
        name: healthName, isHealthy: false, detail: "\(behind) commits not shipped; retrying after: \(error)")
    }
    return StoreHealth.Check(
      name: healthName, isHealthy: true,
      detail: "\(behind) commits not yet shipped, stream at sequence \(s.lastSequence)")
  }

  /// Ships everything the log holds now, then returns (for `eventtool replicate` without
  /// following, and for tests).
  public func shipPending() throws {
    while try shipOnce() {}
  }

  private func run() {
    while !state.withLock({ $0.stopped || $0.fenced != nil }) {
      do {
        if try shipOnce() { continue }
        state.withLock { $0.lastError = nil }
      } catch let e as ReplicationError where e.code == .fenced {
        break
      } catch {
        state.withLock { $0.lastError = "\(error)" }
        _ = wake.wait(timeout: .now() + 0.2)
        continue
      }
      _ = wake.wait(timeout: .now() + 0.005)
    }
  }

  // MARK: - Acknowledging

  public func acknowledge(_ commit: CommitInfo, version: Int) async throws {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
      let outcome = state.withLock { s -> Result<Void, any Error>? in
        if (s.shipped[version] ?? 0) >= commit.number { return .success(()) }
        if let fenced = s.fenced { return .failure(fenced) }
        if s.stopped { return .failure(ReplicationError.stopped(stream: stream)) }
        s.waiters.append(ShipperState.Waiter(version: version, number: commit.number, continuation: continuation))
        return nil
      }
      if let outcome { continuation.resume(with: outcome) } else { wake.signal() }
    }
  }

  func setStreamState(
    lastSequence: UInt64, shipped: [Int: UInt64], bases: [Int: UInt64], announced: Set<Int>, active: Int?
  ) {
    state.withLock {
      $0.lastSequence = lastSequence
      $0.shipped = shipped
      $0.bases = bases
      $0.announced = announced
      $0.streamActive = active
    }
  }

  private func failWaiters(_ error: any Error) {
    let waiters = state.withLock { s in
      defer { s.waiters = [] }
      return s.waiters
    }
    for w in waiters { w.continuation.resume(throwing: error) }
  }

  // MARK: - Shipping

  /// Publishes the next pending message; false when the stream holds everything.
  @discardableResult
  func shipOnce() throws -> Bool {
    let (announced, shipped, active) = state.withLock { ($0.announced, $0.shipped, $0.streamActive) }
    for version in try store.versions() {
      if !announced.contains(version) {
        try publish(
          kind: .model, subject: StreamLayout.model(stream, version: version), id: "v\(version):model",
          headers: [StreamLayout.Header.version: String(version)],
          data: Array(try store.model(version: version).jsonText.utf8))
        state.withLock { _ = $0.announced.insert(version) }
        return true
      }
      if try shipBase(of: version) { return true }
      let from = (shipped[version] ?? 0) + 1
      let records = try store.commitRecords(from: from, version: version, maxCommits: 4096, maxBytes: maxMessageBytes)
      if let first = records.first, let last = records.last {
        // After a base, the commits after its cut are published again: their IDs name the
        // base, or the stream would take them for the first publishes and drop them.
        let after = state.withLock { $0.bases[version] }.map { ":b\($0)" } ?? ""
        try publish(
          kind: .commits, subject: StreamLayout.commits(stream, version: version),
          id: "v\(version)\(after):c\(first.number)",
          headers: [
            StreamLayout.Header.version: String(version), StreamLayout.Header.first: String(first.number),
            StreamLayout.Header.last: String(last.number),
          ], data: StreamLayout.pack(records))
        shippedUpTo(last.number, version: version)
        return true
      }
    }
    let now = try store.activeVersion()
    if now != active {
      let seq = state.withLock { $0.lastSequence }
      try publish(
        kind: .switchVersion, subject: StreamLayout.switchVersion(stream), id: "switch:\(seq + 1)",
        headers: [StreamLayout.Header.version: String(now)], data: [])
      state.withLock { $0.streamActive = now }
      return true
    }
    return false
  }

  /// Publishes the base of `version`'s log when it is newer than the stream's (a
  /// truncation since), then purges the version's commit messages before it; whether it
  /// published.
  ///
  /// The commits after the base's cut are shipped again after it (the stream's copies
  /// before it go with the purge), and so are any the stream lacked: the base stands for
  /// the ones before the cut that it never got.
  private func shipBase(of version: Int) throws -> Bool {
    guard let first = try store.commitRecords(from: 1, version: version, maxCommits: 1).first, first.isBase,
      first.number > state.withLock({ $0.bases[version] ?? 0 })
    else { return false }
    try publish(
      kind: .base, subject: StreamLayout.base(stream, version: version), id: "v\(version):b\(first.number)",
      headers: [StreamLayout.Header.version: String(version), StreamLayout.Header.last: String(first.number)],
      data: first.bytes)
    let at = state.withLock { s in
      s.bases[version] = first.number
      s.shipped[version] = first.number
      return s.lastSequence
    }
    purge(version: version, before: at)
    return true
  }

  /// Removes `version`'s commit messages before stream sequence `sequence` (a base's).
  ///
  /// The stream stays bounded as the log does. A failed purge only leaves them longer (the
  /// next start of a shipper purges again); it is reported in ``status``.
  func purge(version: Int, before sequence: UInt64) {
    do {
      try jetStream.purge(stream, subject: StreamLayout.commits(stream, version: version), before: sequence)
    } catch {
      state.withLock { $0.lastError = "purging the stream before its base at \(sequence): \(error)" }
    }
  }

  private func shippedUpTo(_ number: UInt64, version: Int) {
    let ready = state.withLock { s -> [ShipperState.Waiter] in
      s.shipped[version] = number
      let (done, waiting) = s.waiters.partitioned { $0.version == version && $0.number <= number }
      s.waiters = waiting
      return done
    }
    for w in ready { w.continuation.resume() }
  }

  /// Publishes one message fenced by the stream's last sequence, retrying what may pass
  /// (no leader, a timeout) with the same message ID.
  func publish(
    kind: StreamLayout.Kind, subject: String, id: String, headers: [String: String], data: [UInt8],
    expectNoMessage: Bool = false
  ) throws {
    let message = StreamLayout.message(
      kind, subject: subject, id: id, store: store.storeID, member: member, headers: headers, data: data, key: key)
    var delay = 0.05
    while true {
      let expected = state.withLock { $0.lastSequence }
      let outcome = Result { () throws(NATSError) -> PublishAck in
        try jetStream.publish(
          message, expectLastSequence: expectNoMessage ? nil : expected, expectNoMessage: expectNoMessage)
      }
      let failure: NATSError
      switch outcome {
      case .success(let ack):
        state.withLock { $0.lastSequence = max($0.lastSequence, ack.sequence) }
        return
      case .failure(let e): failure = e
      }
      if failure.isWrongLastSequence {
        // Ours after all, when an earlier try landed and its answer was lost.
        if let last = try? jetStream.streamInfo(stream)?.lastSequence,
          let stored = try? jetStream.message(stream: stream, sequence: last),
          stored.headers["Nats-Msg-Id"] == message.id
        {
          state.withLock { $0.lastSequence = last }
          return
        }
        // A message the writers' key does not verify is no member's: it does not fence.
        if let key, let last = try? jetStream.streamInfo(stream)?.lastSequence,
          let stored = try? jetStream.message(stream: stream, sequence: last), !key.verifies(stored)
        {
          let error = ReplicationError.unauthenticated(stream: stream, stored)
          state.withLock { $0.lastError = error.description }
          throw error
        }
        throw fence(at: expected + 1, detail: "another member published to the stream after sequence \(expected)")
      }
      guard failure.isTransient else { throw failure }
      if state.withLock({ $0.stopped }) { throw ReplicationError.stopped(stream: stream) }
      state.withLock { $0.lastError = "\(failure)" }
      Thread.sleep(forTimeInterval: delay)
      delay = min(delay * 2, 1)
    }
  }

  /// Marks the store fenced, fails every waiting commit and stops shipping.
  ///
  /// The store's role is written before ``status`` says fenced: a process that exits as
  /// soon as it reads that (`eventtool replica --candidate` does) must not end before the
  /// store refuses writes, or it would come back as a primary that is not one.
  private func fence(at sequence: UInt64?, detail: String) -> ReplicationError {
    let error = ReplicationError.fenced(stream: stream, sequence: sequence, detail: detail)
    try? store.setReplicationRole(ReplicationRole(.fenced, stream: stream, detail: detail))
    state.withLock { $0.fenced = error }
    lease?.stop()
    failWaiters(error)
    return error
  }
}

/// What a ``Shipper`` has done.
public struct ShipperStatus: Sendable {
  public let stream: String
  /// The stream's last sequence as the shipper knows it.
  public let lastSequence: UInt64
  /// The last commit in the stream, per model version.
  public let shipped: [Int: UInt64]
  /// Why the shipper stopped for good, when another member took over.
  public let fenced: ReplicationError?
  /// The last failure it is retrying (a stream without a leader, a timeout), if any.
  public let lastError: String?
  /// The member that took the stream's lease from this primary once it lapsed: it is
  /// promoting itself, and this shipper's next publish will be fenced.
  public let leaseLostTo: LeaseHolder?
}

struct ShipperState: Sendable {
  struct Waiter: Sendable {
    let version: Int
    let number: UInt64
    let continuation: CheckedContinuation<Void, any Error>
  }
  var lastSequence: UInt64 = 0
  var shipped: [Int: UInt64] = [:]
  /// The number of the last base in the stream, per version.
  var bases: [Int: UInt64] = [:]
  var announced: Set<Int> = []
  var streamActive: Int?
  var waiters: [Waiter] = []
  var fenced: ReplicationError?
  var stopped = false
  var started = false
  var lastError: String?
}

extension Array {
  /// The elements that satisfy `belongs`, and the others, each in order.
  func partitioned(_ belongs: (Element) -> Bool) -> ([Element], [Element]) {
    var yes: [Element] = []
    var no: [Element] = []
    for e in self { if belongs(e) { yes.append(e) } else { no.append(e) } }
    return (yes, no)
  }
}
