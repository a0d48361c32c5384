internal import EventGraphCrypto
internal import LMDB

/// How a snapshot carries personal data (Docs/privacy.md, "Snapshots").
///
/// Its sealed values are copied as they are — a snapshot keeps identities, so each stays sealed under its
/// subject's key — and the snapshot's keyring takes, in the transaction that first writes
/// one of a subject's values, that subject's data key (wrapped again for the snapshot), or
/// marks the subject erased when its key is gone from the source. A subject whose values
/// the snapshot does not copy gets no key there.
final class SnapshotKeys {
  private let source: Keyring
  private let sourceTxn: ReadHandle
  private let target: Keyring
  /// The subjects handled so far.
  private var carried: Set<ObjectID> = []

  init(source: Keyring, sourceTxn: ReadHandle, target: Keyring) {
    self.source = source
    self.sourceTxn = sourceTxn
    self.target = target
  }

  /// Gives the snapshot the keys of the subjects `events` seal values under, and marks
  /// erased the subjects they erase or whose key the source destroyed.
  func carry(_ events: [Event], into batch: CommitBatch) throws {
    for e in events {
      switch e {
      case .set(_, _, .sealed(let s)?):
        try carry(s.subject, erasing: false, into: batch)
      case .erase(let subject, _):
        try carry(subject, erasing: true, into: batch)
      default:
        continue
      }
    }
  }

  private func carry(_ subject: ObjectID, erasing: Bool, into batch: CommitBatch) throws {
    guard carried.insert(subject).inserted else {
      // A subject first seen by its values, then erased by a later event of the history.
      if erasing { try markErased(subject, in: batch) }
      return
    }
    let entry = try source.entry(subject, in: sourceTxn)
    if erasing || entry?.erased == true {
      try markErased(subject, in: batch)
    } else if entry != nil, let key = try source.dataKey(subject, in: sourceTxn) {
      try target.adopt(key, for: subject, in: batch.handle)
    }
  }

  /// Marks `subject` erased in the snapshot; a key it took there is destroyed once the
  /// commit holds, as an erasure's is.
  private func markErased(_ subject: ObjectID, in batch: CommitBatch) throws {
    if try target.markErased(subject, in: batch.handle) { batch.erased = true }
  }
}
