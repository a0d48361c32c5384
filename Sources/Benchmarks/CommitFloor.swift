import EventGraph
import Foundation
import LMDB

/// A durable commit's own LMDB writes, made directly through the LMDB module: the floor
/// under issue 2's durable-commit ratio.
///
/// A store commit that sets one attribute writes three keys in one transaction: the commit
/// record at the log's end, the object's record, and the object's history entry. Written
/// here without the store's commit path (no `Transaction`, no validation, no projector),
/// into the store's own environment, they touch the same B-trees, pages and free list as
/// the store's commits do; the store's ratio against raw LMDB can come near this one's,
/// not pass it. Each is a real commit, setting the attribute to the value the object's
/// record already holds, so the store stays consistent and its own commits go on after.
final class CommitFloor {
  private let store: EventStore
  private let target: ObjectID
  private let attribute: PropertyID
  private let value: Value
  private let objectRecord: [UInt8]

  /// `target` holds `value` in `attribute` (the store's last commit set it).
  init(store: EventStore, target: ObjectID, attribute: String, value: Value) throws {
    guard let a = store.model.entity(named: "Item")?.propertyID(named: attribute) else {
      throw BaselineError(workload: "commit floor", message: "no attribute \(attribute)")
    }
    let record = try store.env.read { txn in try txn.get(store.dbs.objects, key: StoreKey.object(target)) }
    guard let record else {
      throw BaselineError(workload: "commit floor", message: "no record for #\(target.rawValue)")
    }
    self.store = store
    self.target = target
    self.attribute = a
    self.value = value
    self.objectRecord = record
  }

  /// `n` durable transactions, each writing what one store commit writes.
  func commits(_ n: Int) throws -> Measurement {
    let dbs = store.dbs
    return try measure(operations: n) {
      for _ in 0..<n {
        try store.env.write { txn in
          let c = try txn.cursor(dbs.log)
          guard try c.last() else { throw BaselineError(workload: "commit floor", message: "the log is empty") }
          let last = try c.withCurrent { _, v in try CommitCodec.decode(v, context: "the log's last commit") }
          let commit = Commit(
            number: last.number + 1, firstSequence: last.lastSequence + 1, time: Date(),
            modelVersion: store.model.version, events: [.set(target, attribute: attribute, value: value)])
          try txn.put(
            dbs.log, key: StoreKey.sequence(commit.firstSequence), value: CommitCodec.encode(commit), flags: .append)
          try txn.put(dbs.objects, key: StoreKey.object(target), value: objectRecord)
          try txn.put(dbs.history, key: StoreKey.history(target, commit.firstSequence), value: [UInt8]())
        }
      }
    }
  }
}
