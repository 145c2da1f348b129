package dev.chaise.views.jobs;

/** The job was taken over (its activity went stale) or removed: this worker must stop working on it. */
public final class LeaseLostException extends RuntimeException {
    public LeaseLostException(String type, String jobId) {
        super("lost the lease on " + type + " job " + jobId, null, false, false);
    }
}
