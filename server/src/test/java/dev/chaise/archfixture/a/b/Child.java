package dev.chaise.archfixture.a.b;

import dev.chaise.archfixture.a.Parent;

/** A fixture for {@code PackageCyclesTest}: a subpackage that depends on its parent package, as storage.rev did on storage. */
public final class Child {
    public Parent parent() {
        return new Parent();
    }
}
