import Foundation
internal import LMDB

// A following upcast: the destination version kept caught up with the source log, commit
// by commit, while the source keeps taking commits, and switched to when asked: the last
// catch-up and the switch in one write transaction (``VersionBuild/runBatch(maxEvents:switching:_:)``).

/// Where a following upcast stands, read in one short snapshot.
package struct FollowState: Sendable, Hashable {
  /// The store's active version.
  package var active: Int
  /// The last source sequence done; `nil` when no build of the version is under way.
  package var checkpoint: UInt64?
  /// The source log's last sequence.
  package var sourceEnd: UInt64
  /// Whether a switch was asked (``VersionBuild/requestSwitch(_:to:)``).
  package var switchRequested: Bool
  /// Whether the destination holds every source commit.
  package var caughtUp: Bool { checkpoint == sourceEnd }
}

extension VersionBuild {
  /// Where the builder lock is: a byte of the store's data file far past any data.
  ///
  /// The lock (a ``ProcessLock``) changes nothing in the store and adds no file. The process
  /// building a version of the store holds it: a second upcast is refused while it is
  /// held, and a killed builder's lock goes with it.
  static let builderLockByte: Int64 = 1 << 50

  /// Takes the builder lock of `store`: held until the object returned is released.
  ///
  /// - Throws: ``VersionBuildError`` naming the process that builds (as it recorded itself
  ///   in `meta` when it started), when another does.
  package static func lockBuilder(_ store: EventStore) throws -> AnyObject {
    do {
      return try ProcessLock(file: store.path + "/data.mdb", byte: builderLockByte)
    } catch is ProcessLockHeld {
      let pid = try? store.readStorage { try $0.get(store.dbs.meta, key: MetaKey.upcastBuilder) }
      let who = pid.map { "process " + String(decoding: $0, as: UTF8.self) } ?? "another process"
      throw VersionBuildError(
        "another upcast is building a version of \(store.path) (\(who)); stop it or let it finish first")
    }
  }

  /// The byte after it: held by the process that waits for a switch it asked for, so that a
  /// request whose asker died (killed while it waited) is dropped, not carried out later.
  static let requesterLockByte: Int64 = builderLockByte + 1

  /// Whether the process that asked for a switch still waits for it.
  static func requesterWaits(_ path: String) -> Bool {
    ProcessLock.isHeld(path + "/data.mdb", byte: requesterLockByte)
  }

  /// Whether a process holds the builder lock of the store at `path` (an upcast runs).
  package static func builderRuns(_ path: String) -> Bool {
    ProcessLock.isHeld(path + "/data.mdb", byte: builderLockByte)
  }

  /// Where this build stands.
  package func followState() throws -> FollowState {
    let (meta, keys, sourceDBs, model) = (sourceDBs.meta, keys, sourceDBs, store.model)
    return try store.readStorageHandle { txn in
      let active = try txn.activeVersion(in: meta)
      let checkpoint = try txn.get(meta, key: keys.checkpoint).flatMap { BigEndianKey.decode($0) }
      let end = try GraphReader(txn: txn, dbs: sourceDBs, model: model).logEnd().sequence
      return FollowState(
        active: active ?? 0, checkpoint: checkpoint, sourceEnd: end,
        switchRequested: try txn.contains(meta, key: keys.switchRequest) && Self.requesterWaits(store.path))
    }
  }

  /// Asks the following upcast that builds `version` to switch the store to it: the
  /// builder, at its next batch, catches up and switches in one transaction.
  ///
  /// - Returns: the lock that says the asker waits: hold it until the switch is done (a
  ///   builder drops a request whose asker no longer holds it).
  /// - Throws: ``VersionBuildError`` when the store is at `version` already, has no such
  ///   version, builds it in no following upcast now, or another asker waits; nothing is
  ///   written then.
  package static func requestSwitch(_ store: EventStore, to version: Int) throws -> AnyObject {
    let keys = UpcastKeys(version: version)
    let (meta, path) = (store.dbs.meta, store.path)
    let waiting: ProcessLock
    do {
      waiting = try ProcessLock(file: path + "/data.mdb", byte: requesterLockByte)
    } catch is ProcessLockHeld {
      throw VersionBuildError("another switch of \(path) is under way; wait for it")
    }
    try store.writeStorage { txn in
      let active = try txn.activeVersion(in: meta)
      guard active != version else { throw VersionBuildError("\(path) is already at version \(version)") }
      guard try txn.contains(meta, key: keys.checkpoint) else {
        let known = try txn.contains(store.dbs.models, key: BigEndianKey(UInt64(max(0, version))))
        throw
          known
          ? VersionBuildError(
            "no upcast is building version \(version) of \(path): it was made already",
            remedy: .rollback(path: path, version: version))
          : VersionBuildError("\(path) has no version \(version), and no upcast is building it")
      }
      guard builderRuns(path) else {
        throw VersionBuildError(
          "no following upcast is running to build version \(version) of \(path) (it stopped at its checkpoint)",
          remedy: .followAndSwitch(path: path))
      }
      try txn.put(meta, key: keys.switchRequest, value: "1")
    }
    return waiting
  }

  /// Withdraws a switch asked of a builder that stopped before it switched.
  package static func withdrawSwitch(_ store: EventStore, to version: Int) throws {
    let key = UpcastKeys(version: version).switchRequest
    try store.writeStorage { txn in _ = try txn.delete(store.dbs.meta, key: key) }
  }

  /// Where the switch from `from` to `to` happened: the source log's last sequence and the
  /// destination log's then (the positions that correspond); `nil` when `to` was not made
  /// from `from` by an upcast, or was made before these were recorded.
  static func switchPoint(
    from: Int, to: Int, meta: Database, _ txn: borrowing some TransactionReading & ~Copyable
  ) throws -> (
    source: UInt64, destination: UInt64
  )? {
    let keys = UpcastKeys(version: to)
    guard let f = try txn.metaNumber(meta, keys.from), f == from,
      let s = try txn.get(meta, key: keys.sourceEnd).flatMap({ BigEndianKey.decode($0) }),
      let d = try txn.get(meta, key: keys.destinationEnd).flatMap({ BigEndianKey.decode($0) })
    else { return nil }
    return (s, d)
  }
}

/// Waits for the store's file to change (a commit of any process, a switch): inotify on
/// `data.mdb` where there is one, a short sleep otherwise.
package final class StoreChangeWaiter {
  private let watcher: FileChangeWatcher?

  package init(_ store: EventStore) { watcher = FileChangeWatcher(path: store.path + "/data.mdb") }

  /// Returns when the file was written, or after `milliseconds` at most.
  package func wait(milliseconds: Int32) {
    if let watcher {
      _ = watcher.wait(timeoutMilliseconds: milliseconds)
    } else {
      Thread.sleep(forTimeInterval: min(0.01, Double(milliseconds) / 1000))
    }
  }
}
