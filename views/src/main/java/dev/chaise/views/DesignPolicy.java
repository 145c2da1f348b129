package dev.chaise.views;

import dev.chaise.storage.DbPolicy;
import dev.chaise.storage.DocUpdate;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.DocumentValidator;
import dev.chaise.storage.SecuredDb;
import dev.chaise.storage.StorageException;
import dev.chaise.views.index.ViewException;

/**
 * The database rules that views own, as a {@link DbPolicy} every opened database applies: a design
 * document must parse and its view functions compile before it is saved, and every other document
 * meets the database's validate_doc_update functions for the writing user.
 */
public final class DesignPolicy implements DbPolicy {
    private final DesignDocChecks checks;

    public DesignPolicy(DesignDocChecks checks) {
        this.checks = checks;
    }

    @Override
    public DocUpdate beforeUpdate(SecuredDb db, DocUpdate doc, boolean newEdits) {
        if (doc.deleted() || !doc.id().startsWith(DocumentJson.DESIGN_PREFIX)) return doc;
        try {
            checks.checkDesign(doc.id(), doc.body(), db.database().partitioned());
        } catch (ViewException e) {
            StorageException.Kind kind = e.kind() == ViewException.Kind.COMPILATION_ERROR
                    ? StorageException.Kind.DESIGN_COMPILATION_ERROR : StorageException.Kind.INVALID_DESIGN_DOC;
            throw new StorageException(kind, e.reason());
        }
        return doc;
    }

    @Override
    public DocumentValidator validator(SecuredDb db) {
        return checks.validator(db.user().name(), db.user().roles());
    }
}
