"""Anchor solvers: the libraries everyone uses, run as adapters and judged by our certificates.

Each adapter hands one of our problems to an external library (LIBSVM, LIBLINEAR, scikit-learn,
oneDAL through scikit-learn-intelex), converts the trained model back to our problem's variables
(``w, b`` and/or ``alpha``; ``W, b`` for the multiclass hinge) and lets the PROBLEM certify it
(docs/ARCHITECTURE.md §5): a library's own objective value or convergence claim is never reported as
the result, only its status.

=====================  =================================  =========================================
name                   library call                       problems
=====================  =================================  =========================================
``liblinear``          LIBLINEAR ``-s 3`` / ``-s 1``      SoftMarginPrimal/Dual, bias regularized
                       (dual CD, hinge / squared hinge)   (``-B s``) or none (``-B -1``)
``liblinear_cs``       LIBLINEAR ``-s 4``                 MulticlassHinge, 0-1 cost, bias none or
                       (Crammer-Singer)                   regularized
``libsvm``             LIBSVM C-SVC ``-s 0 -t 0..4``      KernelDual hinge, free bias;
                       (SMO)                              SoftMarginPrimal/Dual hinge, free bias
                                                          (linear kernel)
``sklearn_svc``        ``sklearn.svm.SVC``                as ``libsvm``, per-example weights too
``sklearnex_svc``      ``sklearnex.svm.SVC`` (oneDAL)     as ``sklearn_svc``, no precomputed kernel
``sklearn_linearsvc``  ``sklearn.svm.LinearSVC``          as ``liblinear``, per-example weights too
                       (dual=True)
``sklearn_sgd``        ``sklearn.linear_model.``          SoftMarginPrimal/Dual, bias free or none,
                       ``SGDClassifier`` (penalty l2)     both losses, per-example weights
``liblinear_lr``       LIBLINEAR ``-s 0`` (trust-region   Logistic, every bias (free: ``-B 1 -R``)
                       Newton)
``liblinear_lr_dual``  LIBLINEAR ``-s 7`` (dual CD)       Logistic, bias regularized or none
``sklearn_logistic``   ``sklearn.linear_model.``          Logistic, every bias, per-example weights
                       ``LogisticRegression`` (l2)
``liblinear_svr``      LIBLINEAR ``-s 13`` / ``-s 12``    SVRPrimal, plain / squared loss, bias
                       (dual CD, linear SVR)              regularized or none
``liblinear_svr_``     LIBLINEAR ``-s 11`` (trust-region  SVRPrimal, squared loss, every bias (free:
``primal``             Newton)                            ``-B 1 -R``)
``sklearn_linearsvr``  ``sklearn.svm.LinearSVR``          SVRPrimal, bias regularized or none,
                                                          per-example weights
=====================  =================================  =========================================

What is timed (``solve_time``): only the library's training call (``train``, ``svm_train``,
``fit``). Converting our data to the library's format (the LIBSVM/LIBLINEAR problem objects, a
CSR copy, the precomputed-kernel rows) happens before the clock starts; reading the model back and
certifying it happen after it stops. scikit-learn's ``fit`` validates its input inside the call:
the adapters hand it float64 arrays (C-contiguous, or CSR) so that this check does not copy.

Libraries print nothing: LIBSVM's and LIBLINEAR's output goes to a capturing print function (it
carries their iteration count and their "reaching max number of iterations" warning), and the
scikit-learn estimators run with ``verbose=0``; their ``ConvergenceWarning`` becomes status
``max_iter``. ``iterations`` is in each library's own unit (``iteration_unit``).

Options: ``eps`` is each library's NATIVE stopping tolerance, with the library's default
(LIBLINEAR ``-e`` 0.1, LIBSVM ``-e`` 1e-3, LinearSVC 1e-4, SGD 1e-3); ``tol`` is, as for every
solver, the certified relative gap asked for (default 1e-6): the library stops on its own rule,
and its status is ``optimal`` only if the problem certifies its model at ``tol``
(``not_certified`` otherwise). Training runs single-threaded by default (threadpoolctl
pins the OpenMP/BLAS pools; oneDAL gets ``n_jobs=1``): the LIBSVM binding is built with OpenMP,
and on a loaded two-core machine its barriers made a 200-point run vary from 0.5 ms to 2 s.
``info["threads"]`` records the count; ``n_threads=None`` (LIBSVM, oneDAL) lifts the limit.

The anchors are registered in :mod:`svmbench.solvers.registry` beside the methods:
``registry.get("libsvm")`` configures one, ``registry.anchor_names()`` lists them and
``registry.available_anchors()`` says which libraries are installed. They are measuring sticks,
not methods of this suite: a suite's ``"*"`` does not select them (``"*anchors"`` does).

One module per library family: :mod:`~svmbench.solvers.anchors.base` (the :class:`Anchor` base,
what every adapter shares), :mod:`~svmbench.solvers.anchors.liblinear`,
:mod:`~svmbench.solvers.anchors.libsvm` and :mod:`~svmbench.solvers.anchors.sklearn`
(scikit-learn and oneDAL).
"""
