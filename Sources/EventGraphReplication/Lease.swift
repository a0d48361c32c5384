import EventGraph
import EventGraphLocking
import Foundation
import NATSClient

/// How a primary holds its stream's lease, and how candidates wait for it to lapse
/// (Docs/replication.md, "Automatic failover").
public struct LeaseOptions: Sendable, Hashable {
  /// How long the lease lives after its holder last renewed it, in seconds.
  ///
  /// The holder renews it three times as often. Fixed when the stream's lease bucket is
  /// made.
  public var ttl: Double
  /// Where services reach this member when it is the primary (a URL, a host and port),
  /// published in the lease; any text.
  public var address: String?

  public init(ttl: Double = 2, address: String? = nil) {
    self.ttl = ttl
    self.address = address
  }
}

/// The member that holds a stream's lease: its primary, as far as anyone can know.
public struct LeaseHolder: Sendable, Hashable, Codable {
  /// The member's ID (each copy of a store has one).
  public let member: String
  /// The store's identity.
  public let store: String
  /// Where services reach it, when it said.
  public let address: String?
}

/// The lease of a stream: the entry `primary` of the key-value bucket `EG_LEASE_STREAM`,
/// whose time to live is the lease's.
enum PrimaryLease {
  static let key = "primary"

  static func bucket(_ stream: String) -> String { "EG_LEASE_" + stream }

  /// The stream's lease bucket, made with the stream's replication factor when missing.
  static func open(_ jetStream: JetStream, stream: String, ttl: Double) throws -> KeyValue {
    let replicas = try jetStream.streamInfo(stream)?.replicas ?? 1
    return try KeyValue(jetStream: jetStream, bucket: bucket(stream), ttl: ttl, replicas: max(1, replicas))
  }

  static func encode(_ holder: LeaseHolder) -> [UInt8] { Array((try? JSONEncoder().encode(holder)) ?? Data()) }

  static func decode(_ entry: KeyValue.Entry) -> LeaseHolder? {
    try? JSONDecoder().decode(LeaseHolder.self, from: Data(entry.value))
  }
}

extension ReplicationStatus {
  /// Who holds `stream`'s lease now: the primary services should write to; `nil` when no
  /// one does (no primary holds one, or it lapsed and no candidate has taken it yet).
  public static func leaseHolder(jetStream: JetStream, stream: String) throws -> LeaseHolder? {
    guard let kv = try KeyValue(jetStream: jetStream, existing: PrimaryLease.bucket(stream)) else { return nil }
    return try kv.get(PrimaryLease.key).flatMap(PrimaryLease.decode)
  }
}

/// Holds a stream's lease for its primary: takes it, and renews it from a thread of its
/// own (off the commit path) every third of its time to live.
final class LeaseKeeper: Sendable {
  let kv: KeyValue
  let stream: String
  let mine: LeaseHolder
  let options: LeaseOptions
  private let state = Locked(KeeperState())
  private let stopped = DispatchSemaphore(value: 0)

  struct KeeperState: Sendable {
    var revision: UInt64 = 0
    var lostTo: LeaseHolder?
    var stop = false
    var lastError: String?
  }

  /// Takes the lease for `member`: creates it where none is, or takes over its own from an
  /// earlier run.
  ///
  /// - Throws: ``EventGraphModel/ErrorCode/leaseHeld`` when another member holds it.
  init(jetStream: JetStream, stream: String, member: String, store: String, options: LeaseOptions) throws {
    self.kv = try PrimaryLease.open(jetStream, stream: stream, ttl: options.ttl)
    self.stream = stream
    self.options = options
    self.mine = LeaseHolder(member: member, store: store, address: options.address)
    let revision = try Self.take(kv, mine, stream: stream)
    state.withLock { $0.revision = revision }
    let thread = Thread { [self] in
      renewUntilStopped()
      stopped.signal()
    }
    thread.name = "EventGraph lease"
    thread.start()
  }

  /// Creates the lease for `mine`, or renews it when `mine` already holds it; its revision.
  ///
  /// A bucket just made has no leader for a moment: a transient failure is tried again, for
  /// up to ten seconds.
  static func take(_ kv: KeyValue, _ mine: LeaseHolder, stream: String) throws -> UInt64 {
    var transient = 0
    var conflicts = 0
    while true {
      do {
        if let revision = try attempt(kv, mine, stream: stream) { return revision }
        conflicts += 1
        if conflicts == 5 {
          throw ReplicationError.leaseHeld(
            stream: stream, holder: try kv.get(PrimaryLease.key).flatMap(PrimaryLease.decode))
        }
      } catch let error as NATSError {
        guard error.isTransient, transient < 100 else { throw error }
        transient += 1
        Thread.sleep(forTimeInterval: 0.1)
      }
    }
  }

  /// One try of ``take(_:_:stream:)``: the revision, or `nil` when another write came
  /// between the read and the compare-and-set.
  private static func attempt(_ kv: KeyValue, _ mine: LeaseHolder, stream: String) throws -> UInt64? {
    let value = PrimaryLease.encode(mine)
    guard let entry = try kv.get(PrimaryLease.key) else { return try kv.create(PrimaryLease.key, value) }
    let holder = PrimaryLease.decode(entry)
    guard holder?.member == mine.member else { throw ReplicationError.leaseHeld(stream: stream, holder: holder) }
    return try kv.update(PrimaryLease.key, value, revision: entry.revision)
  }

  /// The member that took the lease from this one, if one did.
  var lostTo: LeaseHolder? { state.withLock { $0.lostTo } }

  private func renewUntilStopped() {
    let value = PrimaryLease.encode(mine)
    while true {
      let (stop, revision, lost) = state.withLock { ($0.stop, $0.revision, $0.lostTo) }
      if stop || lost != nil { return }
      do {
        if let next = try kv.update(PrimaryLease.key, value, revision: revision) {
          state.withLock {
            $0.revision = next
            $0.lastError = nil
          }
        } else if let entry = try kv.get(PrimaryLease.key), let holder = PrimaryLease.decode(entry),
          holder.member != mine.member
        {
          // Another member took it once it lapsed: that one is promoting, and fences this.
          state.withLock { $0.lostTo = holder }
          return
        } else {
          // Lapsed, or renewed by this member's own earlier run: take it again.
          let next = try Self.take(kv, mine, stream: stream)
          state.withLock { $0.revision = next }
        }
      } catch {
        state.withLock { $0.lastError = "\(error)" }
      }
      _ = waitForStop(seconds: options.ttl / 3)
    }
  }

  private let wake = DispatchSemaphore(value: 0)

  private func waitForStop(seconds: Double) -> Bool {
    wake.wait(timeout: .now() + seconds) == .success
  }

  /// Stops renewing (the lease lapses by itself; it is not given up, so that a restart of
  /// the same member takes it back).
  func stop() {
    let first = state.withLock { s -> Bool in
      defer { s.stop = true }
      return !s.stop
    }
    guard first else { return }
    wake.signal()
    stopped.wait()
  }
}
