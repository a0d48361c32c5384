import EventGraph
import Foundation

/// When a following upcast switches the store to its version, and when it stops.
public struct FollowControl: Sendable {
  /// Switch as soon as the new version is caught up (`--switch`).
  public var switchWhenCaughtUp: Bool
  /// Asked between batches: `true` switches at the next batch (after its last catch-up).
  public var switchNow: @Sendable () -> Bool
  /// Asked between batches: `true` stops without switching; the build stays at its
  /// checkpoint, and a following upcast run again resumes it.
  public var stop: @Sendable () -> Bool
  /// Told where the build stands whenever that changed (after a batch, when caught up):
  /// the last source sequence done and the source log's end.
  public var progress: @Sendable (_ done: UInt64, _ sourceEnd: UInt64) -> Void

  public init(
    switchWhenCaughtUp: Bool = false, switchNow: @escaping @Sendable () -> Bool = { false },
    stop: @escaping @Sendable () -> Bool = { false },
    progress: @escaping @Sendable (_ done: UInt64, _ sourceEnd: UInt64) -> Void = { _, _ in }
  ) {
    self.switchWhenCaughtUp = switchWhenCaughtUp
    self.switchNow = switchNow
    self.stop = stop
    self.progress = progress
  }
}

extension Upcaster {
  /// Builds the destination and keeps it caught up with the source log, batch by batch,
  /// until it switches (asked through `control` or by ``EventStore/requestSwitch(at:to:)``)
  /// or `control` stops it.
  ///
  /// When caught up it waits for the store's file to change (inotify on `data.mdb`, as
  /// `log --follow` does; a look every 250 ms besides): a commit of any process wakes it.
  func follow(_ control: FollowControl) throws -> UpcastReport {
    try Self.storage { try followBatches(control) }
  }

  private func followBatches(_ control: FollowControl) throws -> UpcastReport {
    let start = ContinuousClock.now
    var report = freshReport()
    report.resumed = try build.start(fingerprint: fingerprint, discardingNewerCommits: discardsNewerCommits)
    let changes = StoreChangeWaiter(store)
    var reported: (UInt64, UInt64)?
    func tell(_ state: FollowState) {
      let now = (state.checkpoint ?? 0, state.sourceEnd)
      guard reported.map({ $0 != now }) ?? true else { return }
      reported = now
      control.progress(now.0, now.1)
    }
    while !control.stop() {
      let state = try build.followState()
      guard state.active == report.sourceVersion else {
        throw MigrationError(
          "\(store.path) was switched to version \(state.active) under the following upcast from version \(report.sourceVersion); it stops"
        )
      }
      let switching = control.switchWhenCaughtUp || control.switchNow() || state.switchRequested
      if !state.caughtUp || switching {
        let batch = try build.runBatch(maxEvents: batchEvents, switching: switching) { step in try migrate(step) }
        if batch.restarted {
          report = freshReport()
          continue
        }
        report.commitsRead += batch.commitsRead
        report.eventsRead += batch.eventsRead
        report.commitsWritten += batch.commitsWritten
        report.eventsWritten += batch.eventsWritten
        if batch.finished {
          report.switched = true
          break
        }
        if !batch.caughtUp {
          tell(try build.followState())
          continue
        }
      }
      tell(try build.followState())
      // Caught up: wait for a write to the file (any process's commit), or look again soon.
      changes.wait(milliseconds: 250)
    }
    report.objectsPerEntity = try build.objectsPerEntity()
    report.seconds =
      Double((ContinuousClock.now - start).components.attoseconds) / 1e18
      + Double((ContinuousClock.now - start).components.seconds)
    return report
  }
}
