import Foundation
internal import LMDB

/// A projection of your own: a reducer over the commits of the log into a database of its
/// own, kept beside the store's (`projection.NAME.vN`).
///
/// The store keeps the projection's *position* — the last sequence it has applied — in the
/// same transaction as its changes, so it is never applied twice nor skipped, whether it is
/// maintained inline with every commit (``EventStore/register(_:)``) or asynchronously by a
/// task (``EventStore/maintain(_:)``), and it can be rebuilt from the log at any time
/// (``EventStore/rebuild(projection:progress:)``, `eventtool rebuild STORE --projection NAME`).
///
/// `apply` must depend only on the commit and on what the projection stored before — no
/// clock, no reads of the graph, no randomness — so that a rebuild reproduces it byte for
/// byte. Throwing refuses the commit when the projection is inline.
///
/// ```swift
/// struct PhoneIndex: Projection {
///   let name = "phone-index"
///   func apply(_ commit: Commit, to storage: ProjectionStorage) throws {
///     for case .set(let o, let a, let v) in commit.events where a == phoneNumber {
///       guard case .string(let number)? = v else { continue }
///       try storage.put(Array(number.utf8), BigEndianKey(o.rawValue))
///     }
///   }
/// }
/// ```
public protocol Projection: Sendable {
  /// The projection's name: 1 to 200 bytes, no `:`. Its database is `projection.NAME.vN`.
  var name: String { get }
  /// Applies one commit to the projection's storage.
  func apply(_ commit: Commit, to storage: ProjectionStorage) throws
}

/// The projection's database inside the write transaction that applies a commit.
///
/// Valid only during ``Projection/apply(_:to:)``; keys are 1 to 511 bytes, compared byte by
/// byte.
public struct ProjectionStorage {
  let txn: WriteHandle
  let db: Database
  /// The store's databases at the projection's version (to name a commit's objects).
  let dbs: StoreDatabases
  /// The model the commits are written in (names of entities and properties).
  public let model: Model

  /// The value stored under `key`, or `nil`.
  public func get(_ key: [UInt8]) throws -> [UInt8]? { try txn.get(db, key: key) }

  /// Stores `value` under `key`, replacing what was there.
  public func put(_ key: [UInt8], _ value: [UInt8]) throws { try txn.put(db, key: key, value: value) }

  /// Removes `key`; whether it was there.
  @discardableResult
  public func delete(_ key: [UInt8]) throws -> Bool { try txn.delete(db, key: key) }

  /// Visits entries in key order from the first key `>= start`, until `body` returns `false`.
  public func forEach(from start: [UInt8] = [], _ body: ([UInt8], [UInt8]) throws -> Bool) throws {
    try txn.forEach(db, from: start) { k, v in try body([UInt8](k), [UInt8](v)) }
  }
}

/// A read-only view of a projection's database, valid inside
/// ``EventStore/readProjection(_:_:)``.
public struct ProjectionView {
  let txn: ReadHandle
  let db: Database?
  /// The last sequence the projection has applied (0: none).
  public let position: UInt64
  /// The log's last sequence in the same snapshot: the projection is current when equal.
  public let logEnd: UInt64

  /// The value stored under `key`, or `nil`.
  public func get(_ key: [UInt8]) throws -> [UInt8]? {
    guard let db else { return nil }
    return try txn.get(db, key: key)
  }

  /// Visits entries in key order from the first key `>= start`, until `body` returns `false`.
  public func forEach(from start: [UInt8] = [], _ body: ([UInt8], [UInt8]) throws -> Bool) throws {
    guard let db else { return }
    try txn.forEach(db, from: start) { k, v in try body([UInt8](k), [UInt8](v)) }
  }

  /// Every entry, in key order.
  public func entries() throws -> [(key: [UInt8], value: [UInt8])] {
    var all: [(key: [UInt8], value: [UInt8])] = []
    try forEach { k, v in
      all.append((k, v))
      return true
    }
    return all
  }
}
