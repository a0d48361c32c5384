import EventGraph

struct FetchCommand: ToolCommand {
  let spec = CommandSpec(
    name: "fetch", abstract: "List the objects of an entity that match a predicate, sorted and limited.",
    discussion: """
      The predicate is the NSPredicate format-string subset of Docs/query-language.md. An equality, range, \
      BETWEEN, IN or BEGINSWITH on an attribute declared "indexed": true reads only that range of the index (an OR \
      of such clauses, the union of their ranges); anything \
      else scans the entity (sub-entities included). $NAME in the predicate takes the value --var NAME=VALUE \
      gives; a sort key may follow to-one relationships (company.name).
      """,
    positionals: [
      PositionalSpec("STORE", help: "The store directory."),
      PositionalSpec("ENTITY", help: "The entity to fetch (its sub-entities are included)."),
    ],
    options: [
      OptionSpec("where", valueName: "PREDICATE", help: "Only objects for which the predicate holds."),
      QueryVariables.option,
      OptionSpec(
        "sort", valueName: "KEY",
        help: "Sort by an attribute or a to-one key path: 'name', 'company.name desc' or '-name'. Repeatable.",
        isRepeatable: true),
      OptionSpec("limit", valueName: "N", help: "At most N objects."),
      OptionSpec("offset", valueName: "N", help: "Skip the first N objects."),
      OptionSpec("json", help: "Print each object as its export line."),
      readVersionOption,
    ],
    examples: [
      "eventtool fetch book.store PhoneBook --where \"type == 2\" --sort phoneNumber",
      "eventtool fetch book.store AddressBook --where \"lastName BEGINSWITH[c] 'ta'\" --limit 10 --json",
      "eventtool fetch company.store Employee --where \"salary >= $min\" --var min=50000 --sort department.name",
    ])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let entity = try a.required("ENTITY")
    let sort = try a.values("sort").map { text in
      guard let d = SortDescriptor(parsing: text) else {
        throw ToolError.usage("--sort needs 'KEY', 'KEY asc', 'KEY desc' or '-KEY', not '\(text)'")
      }
      return d
    }
    let variables = try QueryVariables.parse(a)
    let limit = try a.int("limit")
    let offset = try a.int("offset") ?? 0
    if let limit, limit < 0 { throw ToolError.usage("--limit needs 0 or more, not \(limit)") }
    if offset < 0 { throw ToolError.usage("--offset needs 0 or more, not \(offset)") }
    let store = try openStore(try a.required("STORE"))
    let predicate = a.value("where")
    try read(store, a) { s in
      let result: FetchResult
      do {
        result = try s.fetch(
          entity, where: predicate, variables: variables, sortedBy: sort, limit: limit, offset: offset)
      } catch let e as QueryError {
        throw ToolError.failed("--where \(predicate.map { "'\($0)'" } ?? ""): \(e)")
      }
      for o in result.objects {
        if a.flag("json") {
          io.print(try s.record(o).jsonText)
        } else {
          let r = try s.record(o)
          io.print(r.id + "  " + r.attributes.map { "\($0.name)=\($0.value.displayText)" }.joined(separator: " "))
        }
      }
      if !a.flag("json") {
        io.printError(
          "\(result.objects.count) object(s); " + (result.index.map { "index on \($0)" } ?? "scan")
            + ", \(result.examined) examined")
      }
    }
  }
}
