import Foundation
internal import LMDB

// A truncation past one machine (Docs/retention.md, "Replicas"): the primary's base travels
// through the stream, and each replica makes its own log start with it. A replica that
// holds every commit the base replaced folds its log exactly as the primary did — the same
// replay, the same base time — and must arrive at the primary's base byte for byte, which
// proves the two logs agreed before the cut. A replica that lacks some of them (made, or
// left behind, after the stream was purged before the base) takes the base as its log.

/// A base a replica folds to, with what the fold writes beside it.
struct ReplicatedBase {
  let base: CommitRecord
  let dbs: StoreDatabases
  let model: Model
  let checkpoint: Checkpoint?

  /// The refusal of a base that this log does not fold to: its commits before the cut are
  /// not the ones the base's maker had.
  static func diverged(_ base: CommitRecord, version: Int, cut: UInt64) -> StoreError {
    StoreError.corrupt(
      "the log of model version \(version) does not fold at sequence \(cut) to the base of commit \(base.number) made elsewhere: its commits before the cut differ from those the base stands for"
    )
  }
}

extension EventStore {
  /// Makes the log of `version` start with `base`, a truncated log's base made elsewhere
  /// (a primary's, through its replication stream), with `checkpoint` in the same
  /// transaction.
  ///
  /// A log that holds every commit the base stands for is folded here as the primary
  /// folded its own (``truncate(_:dryRun:now:)`` at the base's cut, with its time of
  /// truncation), and the base made must be `base` byte for byte; the commits after the
  /// cut stay. A log that lacks some of them — a replica made, or left behind, after its
  /// stream was purged before the base — is replaced by `base`, and its projections are
  /// the ones built from it. A log that starts with this base or a later one takes the
  /// checkpoint alone. A read replica takes bases this way while it refuses every other
  /// write.
  ///
  /// - Parameters:
  ///   - base: the base record, checksum verified (``CommitRecord/isBase``).
  ///   - version: the model version whose log it starts; by default this handle's.
  ///   - checkpoint: written in the same transaction.
  /// - Throws: ``ErrorCode/corrupt`` for a record that is not a base of `version`, and when
  ///   this log folds to another base (its commits before the cut are not the primary's);
  ///   ``ErrorCode/unknownModelVersion``; ``ErrorCode/readOnly``. Nothing is written then.
  public func applyBase(_ base: CommitRecord, version: Int? = nil, checkpoint: Checkpoint? = nil) throws {
    if options.readOnly { throw StoreError.readOnly(path: path) }
    let (target, targetModel) = try databases(version: version)
    let stands = try CommitCodec.read(base.bytes, context: "base record \(base.number)") { $0.header.metadata.base }
    guard let stands, base.modelVersion == targetModel.version else {
      throw StoreError.corrupt(
        "commit record \(base.number) is not a base of model version \(targetModel.version) (it is a \(base.isBase ? "base" : "commit") of version \(base.modelVersion))"
      )
    }
    let (end, current, ending) = try readStorageHandle { txn in
      let reader = GraphReader(txn: txn, dbs: target, model: targetModel)
      return (try reader.logEnd(), try reader.logBase(), try reader.commit(containing: stands.lastSequence))
    }
    if let current, current.number >= base.number {
      if let checkpoint { try setCheckpoint(checkpoint) }
      return
    }
    if end.commit >= base.number {
      // The commit the base ends with must end where the base says.
      guard let ending, ending.number == base.number, ending.lastSequence == stands.lastSequence else {
        throw ReplicatedBase.diverged(base, version: targetModel.version, cut: stands.lastSequence + 1)
      }
      let replicated = ReplicatedBase(base: base, dbs: target, model: targetModel, checkpoint: checkpoint)
      _ = try Self.truncate(
        commits, .before(sequence: stands.lastSequence + 1), dryRun: false, now: stands.truncatedAt,
        replicating: replicated)
      return
    }
    try commits.run { batch, _ in
      try batch.checkNoRebuild()
      for name in StoreDatabases.versionedNames {
        if let db = try batch.handle.openDatabase(
          StoreDatabases.name(name, version: targetModel.version), create: false)
        {
          try batch.handle.empty(db)
        }
      }
      // A batch of its own, which reads the log's end afresh (the emptied log's).
      let into = batch.writing(to: target, model: targetModel)
      let projector = Projector(txn: into.handle, dbs: target, model: targetModel)
      _ = try into.appendRecord(base.bytes, projector: projector)
      try projector.writeObjects()
      if target.version == model.version {
        batch.logEnd = nil
        batch.nextObject = nil
      }
      if let checkpoint { try batch.setCheckpoint(checkpoint) }
    }
  }
}
