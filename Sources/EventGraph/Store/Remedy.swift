/// What a user can do about a refusal, as the library names it.
///
/// An error that knows a way out carries one (``RemediedError/remedy``); its description
/// ends with the remedy in the library's terms (the API that does it). A tool built on
/// the library says it in its own terms instead: `eventtool` keeps a table from remedy to
/// command (`Sources/EventTool/Hints.swift`), so that no library message names a command
/// line. Remedies are made only by the library's errors.
public enum Remedy: Sendable, Hashable, CustomStringConvertible {
  /// The projections of the store at `path` made anew from its log (``EventStore/rebuild(progress:)``).
  case rebuild(path: String)
  /// The store at `path` opened for writing once, which lays its projections out anew.
  case upgrade(path: String)
  /// The commits that remain in the damaged store at `path` recovered into a new store
  /// (``EventStore/salvage(at:into:progress:)``).
  case salvage(path: String)
  /// The read replica at `path` made the primary of its stream (`Replica.promote()`).
  case promote(path: String)
  /// The store at `path` switched back to `version`, one it holds already (a rollback).
  case rollback(path: String, version: Int)
  /// A following upcast of the store at `path` run again to catch up and switch.
  case followAndSwitch(path: String)
  /// The compaction allowed to drop the version a rollback goes back to
  /// (`droppingRollbackVersion: true`).
  case allowDroppingRollbackVersion
  /// The upcast allowed to discard commits written after an earlier one
  /// (`discardingNewerCommits: true`).
  case discardNewer
  /// The import given its objects as new ones (``ImportOptions/newIdentities``).
  case newIdentities
  /// The import told to skip the objects that break the model (`lenient: true`).
  case lenient
  /// The migration policies the mapping names registered with the upcast.
  case registerPolicies

  /// The remedy in the library's terms, to end an error's message.
  public var description: String {
    switch self {
    case .rebuild: return "a rebuild (EventStore.rebuild) makes the projections anew from the log"
    case .upgrade: return "open it for writing once to upgrade it; its projections are made anew from its log"
    case .salvage: return "a salvage (EventStore.salvage) recovers the commits that remain"
    case .promote: return "promoting the replica (Replica.promote) makes this store the primary"
    case .rollback(_, let version): return "a rollback to version \(version) switches to a current one"
    case .followAndSwitch: return "run the following upcast again to catch up and switch"
    case .allowDroppingRollbackVersion: return "allow it with droppingRollbackVersion: true"
    case .discardNewer: return "allow it with discardingNewerCommits: true"
    case .newIdentities:
      return "import it into an empty store, or with newIdentities: true to import its objects as new ones"
    case .lenient: return "import with lenient: true to skip them"
    case .registerPolicies: return "register the policies with the upcast (MigrationPolicies)"
    }
  }
}

/// An error that may know a way out: its message is ``problem``, followed by the
/// ``remedy`` when there is one.
public protocol RemediedError: Error, CustomStringConvertible {
  /// What is wrong and where, without the remedy.
  var problem: String { get }
  /// What a user can do about it, if anything.
  var remedy: Remedy? { get }
}

extension RemediedError {
  /// ``problem``, then the ``remedy`` in the library's terms.
  public var description: String { remedy.map { "\(problem); \($0)" } ?? problem }
}
