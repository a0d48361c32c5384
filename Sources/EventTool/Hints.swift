import EventGraph

/// The remedies the libraries name, said as `eventtool` commands: the library's messages
/// name no command line (Docs/decisions.md, "Errors name no command line"), and this table
/// puts them back for a user of the tool.
enum ToolHints {
  /// An error as the tool prints it: a library error that knows a remedy ends with the
  /// command that applies it; any other by its description.
  static func message(_ error: any Error) -> String {
    guard let e = error as? any RemediedError, let remedy = e.remedy else { return "\(error)" }
    return "\(e.problem); \(hint(remedy))"
  }

  /// The command, or the option, that applies `remedy`.
  static func hint(_ remedy: Remedy) -> String {
    switch remedy {
    case .rebuild(let path): return "`eventtool rebuild \(path)` makes the projections anew from the log"
    case .upgrade(let path):
      return
        "open it for writing once (for example `eventtool rebuild \(path)`) to upgrade it; its projections are made anew from its log"
    case .salvage(let path): return "`eventtool salvage \(path) --out DIR` recovers the commits that remain"
    case .promote(let path): return "`eventtool promote \(path) --nats URLS` makes this store the primary"
    case .rollback(let path, let version):
      return "'eventtool rollback \(path) --to \(version)' switches to a current one"
    case .followAndSwitch(let path): return "run 'eventtool upcast \(path) … --follow --switch' to catch up and switch"
    case .allowDroppingRollbackVersion: return "allow it with --drop-rollback-version"
    case .discardNewer: return "allow it with --discard-newer"
    case .newIdentities:
      return "import it into an empty store, or pass --new-identities to import its objects as new ones"
    case .lenient: return "pass --lenient to skip them"
    case .registerPolicies:
      return "this eventtool has no Swift policies (build your own tool on the EventTool library to register some)"
    }
  }
}
