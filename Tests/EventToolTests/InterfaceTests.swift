import Testing

@testable import EventTool

@Suite("The eventtool command descriptions")
struct InterfaceTests {
  @Test("every command is described without mistakes and has an example")
  func noSpecificationProblems() {
    let tool = EventTool()
    #expect(tool.interface.specificationProblems().isEmpty, "\(tool.interface.specificationProblems())")
    for c in tool.interface.commands { #expect(!c.examples.isEmpty, "\(c.name)") }
  }
}
