import Foundation
internal import LMDB

/// A durable, named follower of the log: it remembers in the store (the `consumers.vN`
/// database) the last sequence it has dealt with, so a restarted service continues where it
/// stopped.
///
/// Delivery is at least once: the position moves only when the consumer acknowledges, so
/// the commits handled after the last acknowledgement are delivered again after a crash.
/// Make the handling idempotent, or write its effect and the position in one transaction
/// with a ``Projection``.
///
/// ```swift
/// let mailer = try store.consumer("mailer")
/// try await mailer.run { commit in
///   try await sendMails(for: commit)
/// }
/// ```
///
/// One process at a time should drive a given consumer name: positions are not leases.
public final class Consumer: Sendable {
  public let name: String
  let store: EventStore
  /// Whether a position before a truncated log's base continues from the base.
  public let fromBase: Bool

  init(name: String, store: EventStore, fromBase: Bool) {
    self.name = name
    self.store = store
    self.fromBase = fromBase
  }

  /// The last sequence acknowledged (0: none), read from the store.
  ///
  /// Positions are kept per model version. In a version an upcast made, a consumer that has
  /// saved no position there yet continues from the one it saved in the version the upcast
  /// read, carried to the new log
  /// (``EventStore/position(in:correspondingTo:)``): a service restarted after a switch
  /// neither misses nor repeats the commits made from what it had dealt with.
  public func position() throws -> UInt64 {
    try store.consumerPosition(name, version: store.model.version)
  }

  /// The commits after the acknowledged position, then live (see
  /// ``EventStore/events(after:fromBase:)``).
  public func commits() throws -> CommitSequence {
    store.events(after: try position(), fromBase: fromBase)
  }

  /// Saves the position: every commit up to event `sequence` is dealt with.
  ///
  /// The position only moves forward (use ``reset(to:)`` to go back). Returns once it is
  /// durable.
  public func acknowledge(through sequence: UInt64) async throws {
    guard let db = try store.service.consumers() else { throw StoreError.readOnly(path: store.path) }
    let key = name
    try await store.service.sideWrite { txn in
      if try StoreService.position(key, in: db, txn) < sequence {
        try txn.put(db, key: key, value: BigEndianKey(sequence))
      }
    }
  }

  /// Saves the position of `commit`: it and everything before it are dealt with.
  public func acknowledge(_ commit: Commit) async throws {
    try await acknowledge(through: commit.lastSequence)
  }

  /// Moves the position to `sequence`, backwards too (0: replay the whole log).
  ///
  /// The position is saved even when it is 0, so that a version an upcast made does not
  /// carry the old version's position over it.
  public func reset(to sequence: UInt64 = 0) async throws {
    guard let db = try store.service.consumers() else { throw StoreError.readOnly(path: store.path) }
    let key = name
    try await store.service.sideWrite { txn in try txn.put(db, key: key, value: BigEndianKey(sequence)) }
  }

  /// Handles every commit after the position, then new ones as they land.
  ///
  /// It acknowledges as it goes: after each commit once caught up, every `batch` commits
  /// while catching up.
  /// Returns only by throwing: `CancellationError` when the task is cancelled, or what
  /// `body` throws (the commit it failed on is not acknowledged).
  public func run(batch: Int = 100, _ body: (Commit) async throws -> Void) async throws {
    var commits = try self.commits().makeAsyncIterator()
    var pending = 0
    while let commit = try await commits.next() {
      try await body(commit)
      pending += 1
      if pending >= batch || !commits.hasBuffered {
        try await acknowledge(through: commit.lastSequence)
        pending = 0
      }
    }
  }
}

extension EventStore {
  /// The durable consumer `name` (1 to 200 bytes, no `:`); its position starts at 0.
  ///
  /// - Parameters:
  ///   - name: 1 to 200 bytes, no `:`.
  ///   - fromBase: when its position lies before the base of a truncated log (0
  ///     included: a consumer that never ran), whether it continues from the base, a commit
  ///     holding the objects as they were at the cut; by default its commits throw
  ///     ``ErrorCode/historyTruncated``, since the commits it has not dealt with are gone
  ///     (Docs/retention.md).
  /// - Throws: ``ServiceError`` `invalidName`.
  public func consumer(_ name: String, fromBase: Bool = false) throws -> Consumer {
    try ServiceError.checkName(name)
    return Consumer(name: name, store: self, fromBase: fromBase)
  }

  /// The position of consumer `name` in `version`'s log: the one saved there, else, for a
  /// version an upcast made, the one of the version it was made from, carried over
  /// (through every upcast of a chain); 0 when there is none.
  func consumerPosition(_ name: String, version: Int) throws -> UInt64 {
    var version = version
    // The versions an upcast went through, newest first, down to one holding a position.
    var through: [Int] = []
    // Bounded: each step goes to an older version, so a chain ends; a damaged meta
    // database could still name a loop.
    for _ in 0..<64 {
      let db = try service.database(StoreDatabases.name("consumers", version: version), create: false)
      if let saved = try readStorage({ txn in try db.flatMap { try txn.get($0, key: name) } }) {
        var position = BigEndianKey.decode(saved) ?? 0
        for newer in through.reversed() where position > 0 {
          position = try self.position(in: newer, correspondingTo: position)
        }
        return position
      }
      guard let made = try versionSwitch(to: version) else { return 0 }
      through.append(version)
      version = made.from
    }
    return 0
  }

  /// Every saved position by name: consumers, and projections as `projection:NAME`.
  ///
  /// Only the positions saved in this handle's version: a consumer that carries its
  /// position over from the version an upcast read (``Consumer/position()``) is listed once
  /// it saves one here.
  public func consumerPositions() throws -> [(name: String, position: UInt64)] {
    guard let db = try service.consumers() else { return [] }
    return try readStorage { txn in
      var all: [(name: String, position: UInt64)] = []
      try txn.forEach(db) { k, v in
        all.append((String(decoding: k, as: UTF8.self), BigEndianKey.decode(v) ?? 0))
        return true
      }
      return all
    }
  }
}
