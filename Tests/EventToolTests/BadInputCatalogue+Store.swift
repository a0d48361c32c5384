import Foundation

// MARK: - Reading and copying a store: export, log, show, stats, fetch, verify, rebuild, clone, snapshot

extension BadInput {
  static let storeCases: [BadInput] =
    notAStoreCases + exportCases + logCases + showCases + fetchCases + rebuildCases + cloneCases + snapshotCases

  /// Every command that takes a store, given paths that are not one or may not be opened.
  static let notAStoreCases: [BadInput] = {
    var cases: [BadInput] = []
    let commands: [[String]] = [
      ["export"], ["log"], ["show", "AddressBook/1"], ["stats"], ["fetch", "AddressBook"], ["verify"], ["rebuild"],
    ]
    for command in commands {
      let name = command[0]
      let rest = Array(command.dropFirst())
      cases.append(bad(1, [name, "@D/nowhere"] + rest, ["@D/nowhere", "no such file"]))
      cases.append(
        bad(1, [name, "@D/empty"] + rest, ["@D/empty", "not an EventGraph store"], files: ["empty": .directory]))
      cases.append(
        bad(1, [name, "@D/file"] + rest, ["@D/file", "not an EventGraph store"], files: ["file": .text("x")]))
      cases.append(bad(1, [name, "@S"] + rest, ["@S/data.mdb", "permission denied"], access: .unreadableStore))
    }
    cases += [
      bad(1, ["stats", "@S"], ["@S", "permission denied", "searching"], access: .unsearchableStore),
      bad(1, ["verify", "@S"], ["@S", "permission denied"], access: .unsearchableStore),
      bad(1, ["rebuild", "@S"], ["@S/data.mdb", "permission denied", "writing"], access: .readOnlyStore),
      bad(2, ["stats"], ["STORE"]),
      bad(2, ["stats", "@S", "extra"], ["extra"]),
      bad(2, ["verify", "@S", "--fix"], ["--fix"]),
      bad(2, ["verify"], ["STORE"]),
    ]
    return cases
  }()

  static let exportCases: [BadInput] = [
    bad(2, ["export"], ["STORE"]),
    bad(2, ["export", "@S", "--at"], ["--at"]),
    bad(2, ["export", "@S", "--at", "x"], ["--at", "'x'"]),
    bad(2, ["export", "@S", "--at", "-1"], ["--at", "'-1'"]),
    bad(2, ["export", "@S", "--at", "1.5"], ["--at", "'1.5'"]),
    bad(1, ["export", "@S", "--at", "999"], ["999", "end of the log"]),
    bad(1, ["export", "@S", "--at", "5"], ["--at 5", "inside commit 1", "--at-commit 1"]),
    bad(1, ["export", "@S", "--at-commit", "2"], ["commit 2", "beyond the end of the log"]),
    bad(1, ["export", "@S", "--entity", "Nope"], ["Nope"]),
    bad(2, ["export", "@S", "--entity"], ["--entity"]),
    bad(2, ["export", "@S", "--entiti", "AddressBook"], ["--entiti", "--entity"]),
  ]

  static let logCases: [BadInput] = [
    bad(2, ["log", "@S", "--from", "10", "--to", "2"], ["--from 10", "--to 2"]),
    bad(2, ["log", "@S", "--to", "0"], ["--to 0"]),
    bad(2, ["log", "@S", "--from", "5", "--to", "4", "--json"], ["--from 5", "--to 4"]),
    bad(2, ["log", "@S", "--follow", "--from", "9", "--to", "3"], ["--from 9", "--to 3"]),
    bad(2, ["log", "@S", "--from", "x"], ["--from", "'x'"]),
    bad(2, ["log", "@S", "--from", "-1"], ["--from", "'-1'"]),
    bad(2, ["log", "@S", "--to", "-5"], ["--to", "'-5'"]),
    bad(2, ["log", "@S", "--to", "99999999999999999999999"], ["--to"]),
    bad(2, ["log", "@S", "--object", "Nope/1"], ["Nope/1"]),
    bad(1, ["log", "@S", "--object", "AddressBook/99"], ["AddressBook/99"]),
    bad(2, ["log", "@S", "--object", "AddressBook/x"], ["AddressBook/x"]),
    bad(1, ["log", "@S", "--object", "PhoneBook/1"], ["PhoneBook/1"]),
    bad(2, ["log", "@S", "--consumer", "audit"], ["--consumer", "--follow"]),
    bad(2, ["log", "@S", "--commits", "3"], ["--commits", "--follow"]),
    bad(2, ["log", "@S", "--follow", "--commits", "0"], ["--commits"]),
    bad(2, ["log", "@S", "--follow", "--commits", "x"], ["--commits", "'x'"]),
    bad(2, ["log", "@S", "--follow", "--object", "AddressBook/1"], ["--object"]),
    bad(2, ["log", "@S", "--folow"], ["--folow", "--follow"]),
  ]

  static let showCases: [BadInput] = [
    bad(2, ["show", "@S"], ["ID"]),
    bad(1, ["show", "@S", "Nope/1"], ["Nope"]),
    bad(1, ["show", "@S", "AddressBook/0"], ["AddressBook/0"]),
    bad(1, ["show", "@S", "AddressBook/x"], ["AddressBook/x"]),
    bad(1, ["show", "@S", "AddressBook/99"], ["AddressBook/99"]),
    bad(1, ["show", "@S", "AddressBook"], ["AddressBook"]),
    bad(1, ["show", "@S", "AddressBook/-1"], ["AddressBook/-1"]),
    bad(1, ["show", "@S", "PhoneBook/1"], ["PhoneBook/1"]),
    bad(1, ["show", "@S", "AddressBook/1", "--at", "999"], ["999"]),
    bad(2, ["show", "@S", "AddressBook/1", "--at", "-1"], ["--at", "'-1'"]),
    bad(2, ["show", "@S", "AddressBook/1", "--at", "soon"], ["--at", "'soon'"]),
    bad(1, ["show", "@S", "AddressBook/4", "--at", "0"], ["AddressBook/4", "after event 0"]),
    // Time travel goes from commit to commit: an event inside one is refused with its ends.
    bad(
      1, ["show", "@S", "AddressBook/1", "--at", "2"], ["--at 2", "inside commit 1", "--at-commit 1", "--at-commit 0"]),
    bad(1, ["show", "@S", "AddressBook/1", "--at-commit", "99"], ["commit 99", "last is commit 1"]),
    bad(2, ["show", "@S", "AddressBook/1", "--at-commit", "one"], ["--at-commit", "'one'"]),
    bad(2, ["show", "@S", "AddressBook/1", "--at", "3", "--at-commit", "1"], ["--at", "--at-commit", "not both"]),
    bad(2, ["show", "@S", "AddressBook/1", "--jsn"], ["--jsn", "--json"]),
  ]

  static let fetchCases: [BadInput] = [
    bad(2, ["fetch", "@S"], ["ENTITY"]),
    bad(1, ["fetch", "@S", "Nope"], ["Nope"]),
    bad(1, ["fetch", "@S", "AddressBook", "--where", "nope == 1"], ["--where", "nope"]),
    bad(1, ["fetch", "@S", "AddressBook", "--where", "firstName =="], ["--where", "firstName =="]),
    bad(1, ["fetch", "@S", "AddressBook", "--where", "firstName == 'x"], ["--where"]),
    bad(1, ["fetch", "@S", "AddressBook", "--where", "phones.nope == 1"], ["--where", "nope"]),
    bad(1, ["fetch", "@S", "AddressBook", "--where", "firstName BETWEEN {1}"], ["--where"]),
    bad(1, ["fetch", "@S", "AddressBook", "--where", "firstName LIKE"], ["--where"]),
    bad(1, ["fetch", "@S", "AddressBook", "--where", "(firstName == 'A'"], ["--where"]),
    bad(1, ["fetch", "@S", "PhoneBook", "--where", "type == 'two'"], ["--where", "type"]),
    bad(1, ["fetch", "@S", "AddressBook", "--sort", "nope"], ["nope"]),
    // $variables and key-path sort keys.
    bad(1, ["fetch", "@S", "AddressBook", "--where", "lastName == $who"], ["--where", "unknown variable $who"]),
    bad(
      1, ["fetch", "@S", "AddressBook", "--where", "lastName == $who", "--var", "whom=B"],
      ["--where", "$who", "did you mean"]),
    bad(1, ["fetch", "@S", "PhoneBook", "--where", "type == $t", "--var", "t=two"], ["--where", "type"]),
    bad(2, ["fetch", "@S", "AddressBook", "--var", "who"], ["--var", "NAME=VALUE"]),
    bad(2, ["fetch", "@S", "AddressBook", "--var", "1x=3"], ["--var", "'1x'"]),
    bad(2, ["fetch", "@S", "AddressBook", "--var", "a=1", "--var", "a=2"], ["--var a", "twice"]),
    bad(1, ["fetch", "@S", "AddressBook", "--sort", "phones.phoneNumber"], ["phones", "to-many"]),
    bad(1, ["fetch", "@S", "PhoneBook", "--sort", "addressBook.nope"], ["AddressBook", "nope"]),
    bad(2, ["fetch", "@S", "AddressBook", "--sort", "firstName sideways"], ["--sort", "firstName sideways"]),
    bad(2, ["fetch", "@S", "AddressBook", "--limit", "-1"], ["--limit", "-1"]),
    bad(2, ["fetch", "@S", "AddressBook", "--limit", "ten"], ["--limit", "'ten'"]),
    bad(2, ["fetch", "@S", "AddressBook", "--offset", "-3"], ["--offset", "-3"]),
    bad(2, ["fetch", "@S", "AddressBook", "--offset", "x"], ["--offset", "'x'"]),
    bad(2, ["fetch", "@S", "AddressBook", "--where"], ["--where"]),
  ]

  static let rebuildCases: [BadInput] = [
    bad(1, ["rebuild", "@S", "--projection", "nope"], ["nope", "entity-counts"]),
    bad(2, ["rebuild", "@S", "--projection"], ["--projection"]),
    bad(2, ["rebuild", "@S", "--all"], ["--all"]),
  ]

  static let cloneCases: [BadInput] = [
    bad(2, ["clone", "@S"], ["ID"], fixture: .company),
    bad(2, ["clone", "@S", "Nope/1"], ["Nope/1"], fixture: .company),
    bad(2, ["clone", "@S", "Company/0"], ["Company/0"], fixture: .company),
    bad(2, ["clone", "@S", "Company/x"], ["Company/x"], fixture: .company),
    bad(1, ["clone", "@S", "Company/99"], ["Company/99"], fixture: .company),
    bad(1, ["clone", "@S", "Employee/1"], ["Employee/1"], fixture: .company),
    bad(1, ["clone", "@S", "Company/1", "--deep", "nope"], ["nope"], fixture: .company),
    bad(1, ["clone", "@S", "Company/1", "--reference", "Company.nope"], ["nope"], fixture: .company),
    bad(1, ["clone", "@S", "Company/1", "--skip", "Nope.employees"], ["Nope"], fixture: .company),
    bad(1, ["clone", "@S", "Company/1", "--set", "nope=1"], ["nope"], fixture: .company),
    bad(2, ["clone", "@S", "Company/1", "--set", "name"], ["--set", "name"], fixture: .company),
    bad(2, ["clone", "@S", "Company/1", "--set", "=concat(name)"], ["--set"], fixture: .company),
    bad(2, ["clone", "@S", "Company/1", "--set", "name=("], ["--set name"], fixture: .company),
    bad(1, ["clone", "@S", "Company/1", "--set", "name=1"], ["name"], fixture: .company),
    bad(1, ["clone", "@S", "Company/1", "--at", "999"], ["999"], fixture: .company),
    bad(2, ["clone", "@S", "Company/1", "--at", "-2"], ["--at", "'-2'"], fixture: .company),
    bad(1, ["clone", "@S", "Company/1", "--into", "@D/nowhere"], ["@D/nowhere"], fixture: .company),
    bad(1, ["clone", "@S", "Company/1", "--into", "@O"], ["model"], fixture: .company),
    bad(2, ["clone", "@S", "Company/1", "--into"], ["--into"], fixture: .company),
    bad(
      1, ["clone", "@S", "Company/1"], ["@S/data.mdb", "permission denied"], fixture: .company,
      access: .readOnlyStore),
  ]

  static let snapshotCases: [BadInput] = [
    bad(2, ["snapshot", "@S"], ["--out"]),
    bad(2, ["snapshot", "@S", "--out"], ["--out"]),
    bad(1, ["snapshot", "@S", "--out", "@S"], ["@S", "already holds a store"]),
    bad(1, ["snapshot", "@S", "--out", "@D/full"], ["@D/full"], files: ["full": .directory, "full/x": .text("x")]),
    bad(2, ["snapshot", "@S", "--out", "@D/new", "--root", "Nope/1"], ["Nope/1"], absent: ["@D/new"]),
    bad(1, ["snapshot", "@S", "--out", "@D/new", "--root", "AddressBook/99"], ["AddressBook/99"], absent: ["@D/new"]),
    bad(1, ["snapshot", "@S", "--out", "@D/new", "--at", "999"], ["999"], absent: ["@D/new"]),
    bad(2, ["snapshot", "@S", "--out", "@D/new", "--at", "x"], ["--at", "'x'"], absent: ["@D/new"]),
    bad(1, ["snapshot", "@S", "--out", "@D/new", "--at", "1"], ["inside commit 1"], absent: ["@D/new"]),
    bad(1, ["snapshot", "@D/nowhere", "--out", "@D/new"], ["@D/nowhere"], absent: ["@D/new"]),
    bad(
      1, ["snapshot", "@S", "--out", "@D/locked/new"], ["@D/locked/new", "permission denied"],
      files: ["locked": .lockedDirectory], access: .otherUser, absent: ["@D/locked/new"]),
  ]
}
