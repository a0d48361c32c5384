import EventGraph
internal import EventGraphText
import Foundation

struct CloneCommand: ToolCommand {
  let spec = CommandSpec(
    name: "clone", abstract: "Deep-copy an object and its subgraph as one commit with fresh identities.",
    discussion: """
      Relationships are followed by their copy policy: deep (copy the targets), reference (link the copy to the \
      same targets), skip. Defaults come from the model ("copy" on a relationship; else cascade -> deep, an inverse \
      that is to-many or absent -> reference, otherwise skip). Names are 'rel' or 'Entity.rel', comma-separated. \
      --set gives a copied attribute a value expression evaluated on the original ('Entity.attr=EXPR' or \
      'attr=EXPR', e.g. "Company.name=concat(name, ' (copy)')" or "badge=uuid()").
      """,
    positionals: [
      PositionalSpec("STORE", help: "The store directory."),
      PositionalSpec("ID", help: "The root object to copy, Entity/N."),
    ],
    options: [
      OptionSpec("deep", valueName: "REL,...", help: "Copy the targets of these relationships.", isRepeatable: true),
      OptionSpec("reference", valueName: "REL,...", help: "Link the copies to the same targets.", isRepeatable: true),
      OptionSpec(
        "skip", valueName: "REL,...", help: "Leave these relationships empty in the copies.", isRepeatable: true),
      OptionSpec(
        "set", valueName: "ATTR=EXPR", help: "Compute an attribute of the copies with an expression.",
        isRepeatable: true),
    ] + TimePoint.options + [
      OptionSpec("into", valueName: "STORE2", help: "Write the copy into another store with the same model."),
      OptionSpec("json", help: "Print the new root and the map from old to new identities as JSON."),
    ],
    examples: [
      "eventtool clone company.store Company/1",
      "eventtool clone company.store Company/1 --skip departments --set \"Company.name=concat(name, ' (copy)')\" --json",
      "eventtool clone company.store Company/1 --at-commit 12 --into archive.store",
    ])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let point = try TimePoint.parse(a)
    let text = try a.required("ID")
    var policy: [String: CopyPolicy] = [:]
    for (option, p) in [("deep", CopyPolicy.deep), ("reference", .reference), ("skip", .skip)] {
      for name in a.values(option).flatMap({ $0.split(separator: ",") }) {
        policy[name.trimmingCharacters(in: .whitespaces)] = p
      }
    }
    var overrides: [String: AttributeOverride] = [:]
    for assignment in a.values("set") {
      guard let eq = assignment.firstIndex(of: "="), eq != assignment.startIndex else {
        throw ToolError.usage("--set needs ATTR=EXPR, not '\(assignment)'")
      }
      let key = assignment[..<eq].trimmingCharacters(in: .whitespaces)
      do {
        overrides[key] = try AttributeOverride.expression(String(assignment[assignment.index(after: eq)...]))
      } catch {
        throw ToolError.usage("--set \(key): \(error)")
      }
    }
    let store = try openStore(try a.required("STORE"), writing: true)
    let at = try point?.sequence(in: store)
    let root = try store.read { try LogCommand.identity(text, in: $0) }
    let target = try a.value("into").map { try openStore($0, writing: true) }
    let bar = io.progress("clone \(text): objects read", total: nil)
    let result = try store.clone(
      root: root, policy: policy, asOf: at, into: target, overrides: overrides, progress: { bar.update($0) })
    bar.finish()
    let written = target ?? store
    func name(_ id: ObjectID, _ s: EventStore) -> String { (try? s.read { $0.display(id) }) ?? "#\(id.rawValue)" }
    if a.flag("json") {
      let pairs = result.identities.sorted { $0.key < $1.key }.map {
        JSONField(name($0.key, store), .string(name($0.value, written)))
      }
      io.print(
        JSON.object([
          JSONField("root", .string(name(result.root, written))), JSONField("objects", .int(Int64(result.count))),
          JSONField("commit", .int(Int64(result.commit.number))), JSONField("identities", .object(pairs)),
        ]).serialized())
    } else {
      io.print(name(result.root, written))
      io.printError(
        "copied \(result.count) object(s) in commit \(result.commit.number) (sequences \(result.commit.firstSequence)...\(result.commit.lastSequence))"
      )
    }
  }
}

struct SnapshotCommand: ToolCommand {
  let spec = CommandSpec(
    name: "snapshot",
    abstract: "Write a new standalone store: the whole store or one subgraph, now or as of a sequence.",
    discussion: """
      Identities are kept. Without --with-history the snapshot is one commit holding the state (for the whole \
      store: a compaction of a long log); with it, the subgraph's events are replayed commit by commit, \
      renumbered, so the snapshot can time-travel too.
      """,
    positionals: [PositionalSpec("STORE", help: "The store directory.")],
    options: [
      OptionSpec("out", valueName: "DIR", help: "The new store's directory (it must not exist).", isRequired: true),
      OptionSpec("root", valueName: "ID", help: "Only this object's subgraph (by the copy policies)."),
    ] + TimePoint.options + [
      OptionSpec("with-history", help: "Replay the events commit by commit instead of one state.")
    ],
    examples: [
      "eventtool snapshot company.store --out compact.store",
      "eventtool snapshot company.store --out acme.store --root Company/1 --with-history",
    ])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let point = try TimePoint.parse(a)
    let out = a.value("out") ?? ""
    let store = try openStore(try a.required("STORE"))
    let at = try point?.sequence(in: store)
    let root = try a.value("root").map { text in try store.read { try LogCommand.identity(text, in: $0) } }
    let bar = io.progress("snapshot: objects read", total: nil)
    let r = try store.snapshot(
      root: root, asOf: at, to: out, withHistory: a.flag("with-history"), progress: { bar.update($0) })
    bar.finish()
    io.print(
      "wrote \(r.path): \(r.objects) objects, \(r.commits) commit(s), \(r.events) events (source at sequence \(r.sourceSequence))"
    )
  }
}
